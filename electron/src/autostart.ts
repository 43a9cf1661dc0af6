/** Linux's "start at login": an XDG autostart entry (Electron's login-item API does nothing there). Pure. */

/**
 * An XDG autostart entry running `command`. Each argument is quoted as the Desktop Entry spec asks (a
 * backslash before `"`, `` ` ``, `$` and `\`), then the value is escaped as any string value is (every `\`
 * doubled) and `%` is written `%%` (it would start a field code).
 */
export function desktopEntry(command: string[]): string {
  const quote = (arg: string) => `"${arg.replace(/(["`$\\])/g, '\\$1')}"`;
  const exec = command.map(quote).join(' ').replace(/\\/g, '\\\\').replace(/%/g, '%%');
  return [
    '[Desktop Entry]',
    'Type=Application',
    'Name=Airlock',
    'Comment=Approval broker for MCP tool calls',
    `Exec=${exec}`,
    'Terminal=false',
    'X-GNOME-Autostart-enabled=true',
    '',
  ].join('\n');
}
