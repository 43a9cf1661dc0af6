@echo off
rem airlock.cmd: Airlock's command line, run by the app's own runtime (the way VS Code's code.cmd runs
rem its CLI). Protect writes this file's path into MCP clients' configs. It sits in <install dir>\resources\bin,
rem next to the app's files; Airlock.exe is two folders up.
setlocal
set "ELECTRON_RUN_AS_NODE=1"
rem what `airlock protect` run from here writes into client configs: this launcher (JSON, backslashes doubled)
if not defined AIRLOCK_LAUNCHER set "AIRLOCK_SELF=%~dp0airlock.cmd"
if not defined AIRLOCK_LAUNCHER set "AIRLOCK_LAUNCHER=["%AIRLOCK_SELF:\=\\%"]"
set "AIRLOCK_SELF="
"%~dp0..\..\Airlock.exe" "%~dp0..\app.asar\electron\dist\cli.js" %*
exit /b %ERRORLEVEL%
