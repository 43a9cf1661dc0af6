// Session approvals, listed and revocable: "for this session" shows in `session.allows`, and `session.revoke`
// takes it back (pushed to that wrapper before it answers, so its next call asks again); revoking only tightens.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, test } from 'vitest';
import { Broker } from '../../../proxy-core/src/broker/broker.js';
import { Store } from '../../../proxy-core/src/broker/db/store.js';
import { userApi, type AskAnswer } from '../../../proxy-core/src/protocol/api.js';
import { rightsOf } from '../../../proxy-core/src/protocol/method.js';
import { WrapperMethod } from '../../../proxy-core/src/protocol/names.js';
import { FakeClock } from '../../helpers/fake-clock.js';
import { channelPair } from '../../helpers/memory-channel.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

test('a session approval is listed, and revoked: the next policy push no longer carries it', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'al-sallow-'));
  dirs.push(dir);
  const store = new Store(join(dir, 'airlock.db'));
  const broker = new Broker({ presence: { required: false }, store, dataDir: dir, ticketTimeoutSeconds: 120, ackTimeoutMs: 1500, clock: new FakeClock() });
  const [end, peer] = channelPair();
  broker.attach(end, 'wrapper');
  const pushes: { sessionAllows: string[] }[] = [];
  peer.setHandlers({
    notify: (m, p) => {
      if (m !== 'policy') return;
      pushes.push(p as { sessionAllows: string[] });
      peer.notify('policy.ack', { version: (p as { version: number }).version });
    },
    request: () => undefined,
  });
  const { sessionId } = await peer.request<{ sessionId: string }>(WrapperMethod.sessionOpen, { client: 'cursor', server: 'fs', command: ['x'], pid: 1, trustFlag: false });
  const held = peer.request<AskAnswer>(WrapperMethod.ask, { callId: 'c1', tool: 'write', arguments: {}, class: 'mutating', reasons: [] });
  for (let i = 0; i < 50 && broker.pending().length === 0; i++) await new Promise((r) => setImmediate(r));
  await broker.callUser('approve', { id: broker.pending()[0]!.id, remember: 'session' });
  await held;
  expect(await broker.callUser('session.allows', {})).toEqual([{ sessionId, client: 'cursor', server: 'fs', tool: 'write' }]);
  expect(pushes.at(-1)!.sessionAllows).toEqual(['write']);
  expect(await broker.callUser('session.revoke', { sessionId, tool: 'write' })).toEqual({ ok: true, revoked: true });
  expect(pushes.at(-1)!.sessionAllows).toEqual([]);
  expect(await broker.callUser('session.allows', {})).toEqual([]);
  expect(await broker.callUser('session.revoke', { sessionId, tool: 'write' })).toEqual({ ok: true, revoked: false });
  expect(rightsOf(userApi['session.revoke'], {}, { ruleAction: () => null, settingTightens: () => false, passkeys: () => 0 })).toBe('tighten');
  broker.shutdown();
  store.close();
});
