/**
 * Set-ups shared by the E-Stop tests: one real broker for an end-to-end test file, and, in memory, a relay whose
 * server process is a fake that counts what E-Stop asked of it.
 */
import { afterAll, afterEach, beforeAll } from 'vitest';
import type { BrokerClient } from '../../proxy-core/src/ipc/client.js';
import type { UpstreamControl } from '../../proxy-core/src/wrap/estop.js';
import { cleanup } from './airlock.js';
import { startBroker } from './e2e.js';
import { Harness } from './relay-harness.js';

/**
 * One broker for the test file: before the first test a daemon in a fresh home, a client of it, an allow rule
 * for every tool of each of `allow` (server names, `*` for all) and then `settings`; `ready` is handed the home
 * and the client. E-Stop is the broker's, for every test of the file: each test starts with it off. Everything
 * is stopped after the last test.
 */
export function brokerForFile(
  o: { allow: string[]; settings?: Record<string, string> },
  ready: (shared: { home: string; broker: BrokerClient }) => void,
): void {
  let broker: BrokerClient;
  beforeAll(async () => {
    const shared = await startBroker(o);
    broker = shared.broker;
    ready(shared);
  });
  afterAll(cleanup);
  afterEach(async () => {
    await broker.call('estop', { on: false });
  });
}

export const allowAll = { rules: [{ id: 'r1', action: 'allow' as const, server: '*', tool: '*', createdAt: 0 }] };

/** The server's process as E-Stop sees it: counts what it was asked to do. */
export function fakeProcess(respawnAnswer: string | null = null): UpstreamControl & { terminated: number; respawned: number } {
  const p = {
    terminated: 0,
    respawned: 0,
    terminate: () => void p.terminated++,
    respawn: async () => {
      p.respawned++;
      return respawnAnswer;
    },
  };
  return p;
}

/**
 * A started harness that allows every call, with `process` (a fresh fakeProcess unless given) for the server's
 * process; `estop` turns E-Stop on or off as the broker would, with `grace` seconds when given.
 */
export async function estopHarness(o: { grace?: number; process?: UpstreamControl } = {}) {
  const proc = (o.process ?? fakeProcess()) as ReturnType<typeof fakeProcess>;
  const h = await new Harness({ policy: allowAll, upstream: proc, restartTimeoutMs: 5000 }).start();
  const estop = (on: boolean) => h.link.push({ estop: on, ...(o.grace !== undefined ? { estopGraceSeconds: o.grace } : {}) });
  return { h, proc, estop };
}
