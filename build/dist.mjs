#!/usr/bin/env node
// `npm run dist`: build everything, then package the desktop app with electron-builder (arguments after
// `--` go to electron-builder, e.g. `npm run dist -- --linux deb`). electron-builder rebuilds better-sqlite3
// for Electron's ABI inside this checkout's node_modules; the Node build is put back afterwards, so the CLI,
// the broker and the tests keep working from the checkout.
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const ADDON = join(ROOT, 'node_modules', 'better-sqlite3', 'build', 'Release', 'better_sqlite3.node');

function run(command, args) {
  const r = spawnSync(command, args, { cwd: ROOT, stdio: 'inherit', shell: process.platform === 'win32' && !command.endsWith('.exe') });
  if (r.error) throw r.error;
  return r.status ?? 1;
}

// npm sets npm_execpath when it runs this script: use that npm, not whichever is on PATH
const npm = process.env.npm_execpath ? [process.execPath, [process.env.npm_execpath]] : ['npm', []];
// the native reaper (Linux; Node-API, so the same binary loads in Electron: no rebuild for Electron's ABI)
run(npm[0], [...npm[1], 'run', 'build:native']);
if (run(npm[0], [...npm[1], 'run', 'build']) !== 0) process.exit(1);

const keep = mkdtempSync(join(tmpdir(), 'airlock-dist-'));
const saved = join(keep, 'better_sqlite3.node');
if (existsSync(ADDON)) copyFileSync(ADDON, saved);
let status = 1;
try {
  status = run(process.execPath, [join(ROOT, 'node_modules', 'electron-builder', 'cli.js'), '--config', 'build/electron-builder.yml', ...process.argv.slice(2)]);
} finally {
  if (existsSync(saved)) copyFileSync(saved, ADDON);
  rmSync(keep, { recursive: true, force: true });
}
process.exit(status);
