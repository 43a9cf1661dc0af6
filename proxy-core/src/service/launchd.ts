/**
 * The LaunchDaemon of the Airlock service (macOS). launchd has no RuntimeDirectory, sandbox settings or journal:
 * the run folder is a kept one made by the installer, the broker's stderr goes to a log file only root and the
 * service can read, and the separation rests on the service's own user alone.
 */
import { daemonArgv, type ServiceLayout } from './layout.js';

function xml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

export function launchdPlist(layout: ServiceLayout, node: string, cli: string): string {
  const args = daemonArgv(layout, node, cli).map((a) => `    <string>${xml(a)}</string>`);
  const log = xml(layout.logPath ?? '/Library/Logs/Airlock/broker.log');
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    '<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">',
    '<!-- Written by `airlock service install`; `airlock service uninstall` removes it. -->',
    '<plist version="1.0">',
    '<dict>',
    '  <key>Label</key>',
    `  <string>${xml(layout.unitName)}</string>`,
    '  <key>ProgramArguments</key>',
    '  <array>',
    ...args,
    '  </array>',
    '  <key>UserName</key>',
    `  <string>${xml(layout.user)}</string>`,
    '  <key>GroupName</key>',
    `  <string>${xml(layout.user)}</string>`,
    // the users group as a supplementary group: the broker gives its socket to it
    '  <key>InitGroups</key>',
    '  <true/>',
    '  <key>RunAtLoad</key>',
    '  <true/>',
    '  <key>KeepAlive</key>',
    '  <dict>',
    '    <key>SuccessfulExit</key>',
    '    <false/>',
    '  </dict>',
    '  <key>Umask</key>',
    '  <integer>63</integer>',
    '  <key>StandardErrorPath</key>',
    `  <string>${log}</string>`,
    '</dict>',
    '</plist>',
    '',
  ].join('\n');
}
