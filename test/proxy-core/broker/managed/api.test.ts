/** The team policy in an in-process broker: its rules, settings and refusals, and a file edited while it runs. */
import { mkdtempSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import { Broker } from '../../../../proxy-core/src/broker/broker.js';
import { Store } from '../../../../proxy-core/src/broker/db/store.js';
import type { BrokerEvent, Rule, SettingInfo } from '../../../../proxy-core/src/protocol/api.js';

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0).reverse()) c();
});

const POLICY = {
  version: 1,
  rules: [{ action: 'deny', server: '*', tool: 'delete_*', note: 'no deletes' }],
  settings: { tripwire: 'on', 'tripwire-calls': '5' },
  servers: { deny: [{ name: 'shell' }] },
  forbiddenGrants: [{ remember: 'always', class: ['destructive'] }],
};

function setup(text = JSON.stringify(POLICY, null, 2)) {
  const dir = mkdtempSync(join(tmpdir(), 'al-managed-api-'));
  const path = join(dir, 'policy.json');
  writeFileSync(path, text);
  const store = new Store(join(dir, 'airlock.db'));
  // anyOwner: an in-process test's own file (no flag or variable of the daemon reaches it)
  const broker = new Broker({ presence: { required: false }, store, dataDir: dir, managed: { path, systemPath: join(dir, 'no-system-policy.json'), anyOwner: true } });
  const events: BrokerEvent[] = [];
  broker.subscribe(0, { send: (e) => (events.push(e), true), ended: () => {} });
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }), () => store.close(), () => broker.shutdown());
  const until = async (type: string, n = 1) => {
    for (let i = 0; i < 400 && events.filter((e) => e.type === type).length < n; i++) await new Promise((r) => setTimeout(r, 10));
    return events.filter((e) => e.type === type);
  };
  return { broker, store, path, events, until };
}

describe('the team policy in the broker', () => {
  test('its rules are listed as managed, and cannot be removed', async () => {
    const { broker, until } = setup();
    await until('managed-policy-loaded');
    const rules = (await broker.callUser('rules.list', {})) as Rule[];
    expect(rules).toContainEqual(expect.objectContaining({ id: 'managed-1', action: 'deny', tool: 'delete_*', managed: true }));
    await expect(async () => broker.callUser('rules.remove', { id: 'managed-1' })).rejects.toThrow(/team policy/);
  });

  test('its settings are written, shown as managed, and cannot be changed either way', async () => {
    const { broker, store, until } = setup();
    await until('managed-policy-loaded');
    expect(store.getSetting('tripwire-calls')).toBe('5');
    const infos = (await broker.callUser('settings.list', {})) as SettingInfo[];
    expect(infos.find((s) => s.key === 'tripwire-calls')).toMatchObject({ value: '5', managed: true });
    expect(infos.find((s) => s.key === 'journal-days')?.managed).toBeUndefined();
    await expect(async () => broker.callUser('settings.set', { key: 'tripwire', value: 'off' })).rejects.toThrow(/set by the team policy/);
    await expect(async () => broker.callUser('settings.set', { key: 'tripwire-calls', value: '4' })).rejects.toThrow(/set by the team policy/);
    expect(store.getSetting('tripwire')).not.toBe('off');
    await broker.callUser('settings.set', { key: 'journal-days', value: '120' });
    expect(store.getSetting('journal-days')).toBe('120');
  });

  test('a bad edit is refused with its line and the policy before it holds; removing the file ends it', async () => {
    const { broker, path, until } = setup();
    await until('managed-policy-loaded');
    writeFileSync(path, '{\n  "version": 1,\n  "rules": [\n    { "action": "allow", "server": "*", "tool": "*" },\n  ]\n}');
    const [refused] = await until('managed-policy-refused');
    expect(refused!.detail).toMatchObject({ path, line: 5, kept: true });
    expect(broker.status().managed).toMatchObject({ state: 'refused', line: 5, inForce: true });
    expect(((await broker.callUser('rules.list', {})) as Rule[]).filter((r) => r.managed).map((r) => r.action)).toEqual(['deny']);
    unlinkSync(path);
    await until('managed-policy-ended');
    expect(((await broker.callUser('rules.list', {})) as Rule[]).some((r) => r.managed)).toBe(false);
    await broker.callUser('settings.set', { key: 'tripwire-calls', value: '4' });
  });

  test('a good edit replaces the policy while the broker runs', async () => {
    const { broker, path, until } = setup();
    await until('managed-policy-loaded');
    writeFileSync(path, JSON.stringify({ ...POLICY, rules: [{ action: 'ask', server: 'fs', tool: '*' }, { action: 'deny', server: '*', tool: 'rm' }] }));
    await until('managed-policy-loaded', 2);
    const managed = ((await broker.callUser('rules.list', {})) as Rule[]).filter((r) => r.managed);
    expect(managed.map((r) => [r.id, r.action, r.tool])).toEqual([['managed-1', 'ask', '*'], ['managed-2', 'deny', 'rm']]);
  });
});
