/**
 * The team policy file end to end: a daemon reading a root-owned policy file (the override path, as tests and
 * hardened set-ups name it), a wrapped fixture server, the CLI. Managed rules and settings are shown as such and
 * cannot be changed; a denied server's calls are refused; an "always" the policy forbids is refused; a bad edit
 * is refused by line while the previous policy holds. And, run as another real user, a policy file that user
 * owns is refused: a file the user can write is no team policy.
 */
import { chmodSync, chownSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import { accountName, asUser, assertRoot, cliAs, makeUser } from '../helpers/accounts.js';
import { cleanup, cli, cliJson, decisionOf, executedCalls, startDaemon, tempDir, textOf, untilBroker, waitForTicket } from '../helpers/airlock.js';
import { startAirlock, wrapFixture } from '../helpers/e2e.js';
import type { BrokerStatus } from '../../proxy-core/src/protocol/api.js';

afterEach(cleanup);

const POLICY = {
  version: 1,
  rules: [{ action: 'deny', server: '*', tool: 'write_note', note: 'notes are read-only here' }],
  settings: { 'tripwire-calls': '7' },
  servers: { deny: [{ name: 'denied' }] },
  forbiddenGrants: [{ remember: 'always', class: ['destructive'] }],
};

function policyFile(text: string, owner = 0): string {
  const dir = tempDir('al-team-');
  chmodSync(dir, 0o755);
  const path = join(dir, 'policy.json');
  writeFileSync(path, text);
  chmodSync(path, 0o644);
  chownSync(path, owner, owner);
  return path;
}

async function managedState(home: string, check: (m: NonNullable<BrokerStatus['managed']>) => boolean): Promise<NonNullable<BrokerStatus['managed']>> {
  return untilBroker(home, (e) => e.type.startsWith('managed-policy'), async (c) => {
    const m = (await c.call('status', {})).managed;
    return m && check(m) ? m : undefined;
  }, 10_000, 'the team policy state');
}

describe('the team policy file', () => {
  test('managed rules, settings and grants hold against the user; a denied server is refused; a bad edit keeps the last good one', async () => {
    assertRoot();
    const path = policyFile(JSON.stringify(POLICY, null, 2));
    const { home } = await startAirlock({ args: ['--managed-policy', path] });
    await managedState(home, (m) => m.state === 'ok');

    const rules = await cli(home, ['rules']);
    expect(rules.stdout).toMatch(/managed-1\s+deny \(managed\)\s+\*\s+write_note/);
    expect((await cli(home, ['rules', 'remove', 'managed-1'])).stderr).toMatch(/team policy/);
    const settings = await cli(home, ['settings']);
    expect(settings.stdout).toMatch(/tripwire-calls\s+7 \(managed\)/);
    const changed = await cli(home, ['settings', 'tripwire-calls', '50']);
    expect(changed.code).not.toBe(0);
    expect(changed.stderr).toMatch(/set by the team policy/);
    expect((await cli(home, ['status'])).stdout).toContain(`Team policy: ${path} (in force)`);

    const { w, fx } = await wrapFixture(home);
    const refused = await w.client.callTool({ name: 'write_note', arguments: { text: 'x' } });
    expect(refused.isError).toBe(true);
    expect(decisionOf(refused)).toMatchObject({ decision: 'deny', decidedBy: 'rule' });
    expect(textOf(refused)).toMatch(/managed-1/);

    const held = w.client.callTool({ name: 'delete_all', arguments: {} });
    const ticket = await waitForTicket(home, 'delete_all');
    const always = await cli(home, ['approve', ticket.id, '--always']);
    expect(always.code).not.toBe(0);
    expect(always.stderr).toMatch(/forbids remembering "always"/);
    expect((await cli(home, ['approve', ticket.id])).code).toBe(0);
    expect((await held).isError).toBeFalsy();
    expect((await cliJson<{ id: string }[]>(home, ['rules', '--json'])).filter((r) => !r.id.startsWith('managed-'))).toEqual([]);

    const denied = await wrapFixture(home, { server: 'denied' });
    const blocked = await denied.w.client.callTool({ name: 'echo', arguments: { text: 'hi' } });
    expect(blocked.isError).toBe(true);
    expect(textOf(blocked)).toMatch(/team policy denies this server/);
    expect(executedCalls(denied.fx.log)).toEqual([]);
    expect(executedCalls(fx.log, 'write_note')).toEqual([]);

    // an edit with a trailing comma on line 3: refused with that line, the policy before still holds
    writeFileSync(path, '{\n  "version": 1,\n  "rules": [],\n}\n');
    const bad = await managedState(home, (m) => m.state === 'refused');
    expect(bad).toMatchObject({ line: 4, inForce: true });
    expect((await cli(home, ['status'])).stdout).toMatch(/team policy .* refused at line 4/);
    expect((await cli(home, ['rules'])).stdout).toContain('managed-1');
  }, 90_000);

  test('run as another user, a policy file that user owns is refused', async () => {
    assertRoot();
    const user = accountName('alp');
    const uid = makeUser(user);
    const home = tempDir('al-team-user-');
    chownSync(home, uid, uid);
    chmodSync(home, 0o700);
    const path = policyFile(JSON.stringify(POLICY), uid);
    await startDaemon(home, ['--managed-policy', path], {}, false, asUser(user));
    const status = await cliAs(user, ['status', '--json'], { AIRLOCK_HOME: home });
    expect(status.code, status.stderr).toBe(0);
    const managed = (JSON.parse(status.stdout) as BrokerStatus).managed;
    expect(managed).toMatchObject({ state: 'refused', inForce: false, error: `owned by uid ${uid}, not root: the user could loosen it` });
    const rules = await cliAs(user, ['rules', '--json'], { AIRLOCK_HOME: home });
    expect(JSON.parse(rules.stdout)).toEqual([]);
  }, 60_000);
});
