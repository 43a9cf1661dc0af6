/** The Servers page's pure parts: which configured servers run, which are unprotected, tools by class, findings by severity. */
import { describe, expect, test } from 'vitest';
import type { ClientConfigs, SessionInfo } from '@airlock/proxy-core/protocol/api';
import { findingsBySeverity, flatAnnotations, isRunning, knownServers, toolsByClass, unprotectedCount } from '../../../renderer/src/lib/servers.js';

describe('servers', () => {
  const clients: ClientConfigs[] = [
    {
      client: 'cursor',
      label: 'Cursor',
      found: true,
      locations: [
        {
          path: '/home/me/.cursor/mcp.json',
          scope: 'global',
          format: 'json',
          servers: [
            { name: 'fs', transport: 'stdio', protected: true, protectable: true, wrappedAs: 'filesystem' },
            { name: 'mail', transport: 'stdio', protected: false, protectable: true },
            { name: 'remote', transport: 'http', protected: false, protectable: false, reason: 'a remote server' },
          ],
        },
      ],
    },
  ];
  const sessions: SessionInfo[] = [{ id: 's', client: 'cursor', server: 'filesystem', command: [], pid: 1, since: 0 }];

  test('running, known, unprotected', () => {
    expect(isRunning(clients[0]!.locations[0]!.servers[0]!, sessions)).toBe(true);
    expect(isRunning(clients[0]!.locations[0]!.servers[1]!, sessions)).toBe(false);
    expect(knownServers([...sessions, { ...sessions[0]!, server: 'zeta' }], clients)).toEqual(['filesystem', 'zeta']);
    expect(unprotectedCount(clients[0]!)).toBe(1);
  });

  test('flat annotations and tools by class', () => {
    expect(flatAnnotations({ readOnlyHint: true, title: 'Notes' })).toEqual([
      ['readOnlyHint', 'true'],
      ['title', '"Notes"'],
    ]);
    expect(flatAnnotations({ nested: { a: 1 } })).toBeNull();
    expect(flatAnnotations('read-only, promise')).toBeNull();
    expect(toolsByClass([{ name: 'a', class: 'mutating', reasons: [] }, { name: 'b', class: 'destructive', reasons: [] }, { name: 'c', class: 'mutating', reasons: [] }])).toEqual([
      { cls: 'mutating', names: ['a', 'c'] },
      { cls: 'destructive', names: ['b'] },
    ]);
  });

  test('findings by severity, most severe first', () => {
    const groups = findingsBySeverity([
      { severity: 'info', message: 'a' },
      { severity: 'high', message: 'b' },
      { severity: 'odd', message: 'c' },
      { severity: 'warning', message: 'd' },
      { severity: 'high', message: 'e' },
    ]);
    expect(groups.map((g) => [g.severity, g.findings.length])).toEqual([
      ['high', 2],
      ['warning', 1],
      ['info', 1],
      ['odd', 1],
    ]);
  });
});
