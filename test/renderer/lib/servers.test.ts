/** The renderer's small pure helpers: routes, the virtual list's arithmetic, times, words, servers, reloads. */
import { describe, expect, test } from 'vitest';
import type { BrokerEvent, ClientConfigs, SessionInfo } from '@airlock/proxy-core/protocol/api';
import { classInfo } from '../../../renderer/src/lib/classes.js';
import { errorInfo, errorText } from '../../../renderer/src/lib/errors.js';
import { ofType, reloadOn } from '../../../renderer/src/lib/reload.js';
import { href, parseHash } from '../../../renderer/src/lib/router.js';
import { findingsBySeverity, flatAnnotations, isRunning, knownServers, toolsByClass, unprotectedCount } from '../../../renderer/src/lib/servers.js';
import { settingTitle, hasTimeoutSetting } from '../../../renderer/src/lib/settings.js';
import { countdownWords, formatCountdown, formatDuration, parseLocalDateTime } from '../../../renderer/src/lib/time.js';
import { nearEnd, scrollToRow, visibleRange } from '../../../renderer/src/lib/virtual.js';
import { resolutionText } from '../../../renderer/src/lib/words.js';

describe('router', () => {
  test.each([
    ['', { page: 'approvals' }],
    ['#/', { page: 'approvals' }],
    ['#/approvals', { page: 'approvals' }],
    ['#/activity', { page: 'activity' }],
    ['#/servers', { page: 'servers' }],
    ['#/tools', { page: 'tools' }],
    ['#/tools/my%20server', { page: 'tools', server: 'my server' }],
    ['#/rules', { page: 'rules' }],
    ['#/settings', { page: 'settings' }],
    ['#/ticket/3f9c01ab', { page: 'ticket', id: '3f9c01ab' }],
    ['#/ticket/', { page: 'not-found', path: 'ticket/' }],
    ['#/nope', { page: 'not-found', path: 'nope' }],
  ])('%s', (hash, route) => {
    expect(parseHash(hash)).toEqual(route);
  });

  test('href round-trips', () => {
    for (const r of [{ page: 'tools', server: 'a/b c' }, { page: 'ticket', id: 'x y' }, { page: 'rules' }] as const) expect(parseHash(href(r))).toEqual(r);
  });
});

describe('virtual list', () => {
  test('only the rows in view, plus overscan', () => {
    expect(visibleRange({ scrollTop: 0, height: 400, rowHeight: 40, count: 100_000, overscan: 5 })).toEqual({ start: 0, end: 16, offset: 0, total: 4_000_000 });
    expect(visibleRange({ scrollTop: 40_000, height: 400, rowHeight: 40, count: 100_000, overscan: 5 })).toEqual({ start: 995, end: 1016, offset: 39_800, total: 4_000_000 });
    expect(visibleRange({ scrollTop: 9e9, height: 400, rowHeight: 40, count: 10, overscan: 5 }).end).toBe(10);
    expect(visibleRange({ scrollTop: 0, height: 400, rowHeight: 40, count: 0 })).toEqual({ start: 0, end: 0, offset: 0, total: 0 });
  });

  test('near the end; bringing a row into view', () => {
    expect(nearEnd({ start: 0, end: 60, offset: 0, total: 0 }, 100, 50)).toBe(true);
    expect(nearEnd({ start: 0, end: 20, offset: 0, total: 0 }, 100, 50)).toBe(false);
    expect(scrollToRow(0, 400, 400, 40)).toBe(0);
    expect(scrollToRow(20, 0, 400, 40)).toBe(440);
    expect(scrollToRow(5, 0, 400, 40)).toBe(0);
  });
});

describe('time', () => {
  test('countdowns', () => {
    expect(formatCountdown(119_001)).toBe('2:00');
    expect(formatCountdown(65_000)).toBe('1:05');
    expect(formatCountdown(9_000)).toBe('0:09');
    expect(formatCountdown(-5)).toBe('0:00');
    expect(formatCountdown(3_723_000)).toBe('1:02:03');
    expect(countdownWords(65_000)).toBe('1 minute 5 seconds');
    expect(countdownWords(1_000)).toBe('1 second');
  });

  test('durations and datetime-local values', () => {
    expect(formatDuration(850)).toBe('850 ms');
    expect(formatDuration(1234)).toBe('1.2 s');
    expect(formatDuration(184_000)).toBe('3 min 4 s');
    expect(parseLocalDateTime('')).toBeUndefined();
    expect(parseLocalDateTime('nonsense')).toBeUndefined();
    expect(parseLocalDateTime('2025-01-02T03:04')).toBe(new Date(2025, 0, 2, 3, 4).getTime());
  });
});

describe('words', () => {
  test('classes, errors, resolutions, settings', () => {
    expect(classInfo('destructive').tone).toBe('danger');
    expect(classInfo('read-only-trusted').tone).toBe('calm');
    expect(classInfo('something-new')).toMatchObject({ label: 'something-new', tone: 'danger' });
    expect(errorInfo(Object.assign(new Error('gone'), { code: 'not-pending' }))).toEqual({ code: 'not-pending', message: 'gone' });
    expect(errorText(Object.assign(new Error('unknown method inspect'), { code: 'unknown-method' }))).toMatch(/does not offer this yet/);
    expect(errorText('plain')).toBe('plain.');
    expect(resolutionText('approved', 'session')).toBe('Allowed for this session');
    expect(resolutionText('timeout')).toBe('Timed out (denied)');
    expect(settingTitle('auto-protect')).toBe('Protect new servers automatically');
    expect(settingTitle('new-thing')).toBe('New thing');
    expect(hasTimeoutSetting(['auto-protect', 'ticket-timeout'])).toBe(true);
  });
});

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

describe('reloadOn', () => {
  test('loads now, once more per burst of relevant events, never two at once', async () => {
    const listeners = new Set<(e: BrokerEvent) => void>();
    const source = { on: (l: (e: BrokerEvent) => void) => (listeners.add(l), () => listeners.delete(l)) };
    const emit = (type: string) => listeners.forEach((l) => l({ seq: 1, at: 0, type, server: null, tool: null, detail: {} }));
    let running = 0;
    let max = 0;
    let runs = 0;
    let release: () => void = () => undefined;
    const load = () =>
      new Promise<void>((resolve) => {
        runs++;
        running++;
        max = Math.max(max, running);
        release = () => {
          running--;
          resolve();
        };
      });
    const stop = reloadOn(source, ofType('rule-added'), load);
    expect(runs).toBe(1);
    emit('rule-added');
    emit('rule-added');
    emit('estop-on');
    release();
    await new Promise((r) => setTimeout(r, 0));
    expect(runs).toBe(2);
    release();
    await new Promise((r) => setTimeout(r, 0));
    expect(runs).toBe(2);
    expect(max).toBe(1);
    stop();
    emit('rule-added');
    expect(runs).toBe(2);
    expect(listeners.size).toBe(0);
  });
});
