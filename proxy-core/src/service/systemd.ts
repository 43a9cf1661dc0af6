/**
 * The systemd unit of the Airlock service. What the hardening keeps from the broker, and what it leaves:
 * - ProtectSystem=strict: the whole file system read-only, but for its data dir (StateDirectory and
 *   ReadWritePaths) and its run folder (RuntimeDirectory, removed when it stops).
 * - ProtectHome=read-only, not yes: the broker writes nothing in people's homes, but it reads there to show a
 *   held write call as a diff of the file it would change. It can only read what any other local user may read
 *   (file permissions still apply), so read-only adds no reach that another account would not have.
 * - No capabilities, no new privileges, no namespaces, no devices, a private /tmp, sockets: Unix and IP only
 *   (the optional browser UI listens on 127.0.0.1). Not MemoryDenyWriteExecute: V8's JIT needs it.
 */
import { daemonArgv, type ServiceLayout } from './layout.js';

/** One ExecStart word: quoted when systemd would split or expand it. */
function word(arg: string): string {
  if (/^[A-Za-z0-9_@%+=:,./-]+$/.test(arg)) return arg;
  return `"${arg.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\$/g, '$$$$').replace(/%/g, '%%')}"`;
}

export function systemdUnit(layout: ServiceLayout, node: string, cli: string): string {
  const runName = layout.runDir.replace(/^\/run\//, '');
  const stateName = layout.dataDir.replace(/^\/var\/lib\//, '');
  return [
    '# Written by `airlock service install`; `airlock service uninstall` removes it.',
    '[Unit]',
    'Description=Airlock approval broker for MCP tools',
    'After=local-fs.target',
    '',
    '[Service]',
    'Type=simple',
    `User=${layout.user}`,
    `Group=${layout.user}`,
    // to give the socket and the secret's copy to the users group, the service must be a member of it
    `SupplementaryGroups=${layout.usersGroup}`,
    `ExecStart=${daemonArgv(layout, node, cli).map(word).join(' ')}`,
    `RuntimeDirectory=${runName}`,
    'RuntimeDirectoryMode=0750',
    `StateDirectory=${stateName}`,
    'StateDirectoryMode=0700',
    'UMask=0077',
    'Restart=on-failure',
    'RestartSec=2',
    'TimeoutStopSec=20',
    'NoNewPrivileges=yes',
    'ProtectSystem=strict',
    `ReadWritePaths=${layout.dataDir}`,
    'ProtectHome=read-only',
    'PrivateTmp=yes',
    'PrivateDevices=yes',
    'ProtectKernelTunables=yes',
    'ProtectKernelModules=yes',
    'ProtectKernelLogs=yes',
    'ProtectControlGroups=yes',
    'ProtectClock=yes',
    'ProtectHostname=yes',
    'RestrictSUIDSGID=yes',
    'RestrictRealtime=yes',
    'RestrictNamespaces=yes',
    'LockPersonality=yes',
    'RestrictAddressFamilies=AF_UNIX AF_INET AF_INET6',
    'CapabilityBoundingSet=',
    'AmbientCapabilities=',
    'SystemCallArchitectures=native',
    '',
    '[Install]',
    'WantedBy=multi-user.target',
    '',
  ].join('\n');
}
