/**
 * A wrapper's journal batches as the broker takes them in, as their bytes, against a real broker: the agent can
 * be a wrapper connection (it reads the socket's secret from the data dir) and send what it likes. A request of
 * the raw form cut short anywhere costs it its connection, never the broker; a batch that arrives in many chunks
 * is filed whole, every entry in the journal.
 */
import type { Socket } from 'node:net';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, expect, test } from 'vitest';
import { connectBroker } from '../../proxy-core/src/ipc/connect.js';
import { PING, WrapperMethod } from '../../proxy-core/src/protocol/names.js';
import { cleanup } from '../helpers/airlock.js';
import { startBroker } from '../helpers/e2e.js';
import { callRecord } from '../helpers/records.js';

afterEach(cleanup);

const head = (id: number) => `{"t":"req","id":${id},"m":"journal","p":`;

test('raw journal requests cut short anywhere lose their connection; the broker lives and answers', async () => {
  const { home, broker, daemon } = await startBroker();
  const proc = daemon.proc;
  const params = '{"n":1234,"entries":[{"id":"x"}]}';
  // every cut of the params that still ends the request with a brace: the raw form, broken at each byte
  const lines = Array.from({ length: params.length - 1 }, (_, end) => `${head(1)}${params.slice(0, end + 1)}}`);
  for (const line of lines) {
    const wrapper = await connectBroker({ dir: home, role: 'wrapper' });
    const gone = new Promise<void>((resolve) => wrapper.socket.once('close', () => resolve()));
    (wrapper.socket as Socket).write(`${line}\n`);
    // answered (refused as JSON, or parsed and refused for want of a session), or cut off: either way, at once
    await Promise.race([gone, wrapper.request(PING, {}).catch(() => undefined)]);
    wrapper.destroy();
    expect(proc.exitCode, line).toBeNull();
    expect(proc.signalCode, line).toBeNull();
  }
  expect(await broker.call('status', {})).toMatchObject({ pid: proc.pid });
});

test('a batch that arrives in many small chunks is filed whole', async () => {
  const { home, broker } = await startBroker();
  const wrapper = await connectBroker({ dir: home, role: 'wrapper' });
  wrapper.setHandlers({ notify: (method, params) => method === 'policy' && wrapper.notify('policy.ack', { version: (params as { version: number }).version }) });
  await wrapper.request(WrapperMethod.sessionOpen, { client: 'chunked', server: 'chunks', command: ['x'], pid: process.pid, trustFlag: false });
  const entries = Array.from({ length: 400 }, (_, i) => JSON.stringify(callRecord({ id: `chunk-${i}`, arguments: JSON.stringify({ text: `é☕ "${i}" \\ ${'x'.repeat(2 * i)}` }) })));
  const line = Buffer.from(`${head(9000)}{"n":400,"entries":[${entries.join(',')}]}}\n`);
  expect(line.length).toBeGreaterThan(200 * 1024);
  const answered = new Promise<unknown>((resolve) => {
    wrapper.socket.on('data', (d: Buffer) => {
      if (d.includes('"id":9000')) resolve(JSON.parse(d.toString().split('\n').find((l) => l.includes('"id":9000'))!));
    });
  });
  const socket = wrapper.socket as Socket;
  for (let at = 0; at < line.length; at += 1500) {
    socket.write(line.subarray(at, at + 1500));
    // each piece its own read at the broker, as a slow writer's would be
    await new Promise((r) => setTimeout(r, 1));
  }
  expect(await answered).toMatchObject({ t: 'res', id: 9000, ok: true, r: { acked: 400 } });
  // what the journal holds on disk, read back through a front end: every call, with its arguments as sent
  const history = (await broker.call('history', { server: 'chunks', limit: 500 })) as { calls: { id: string; arguments: string }[] };
  expect(history.calls).toHaveLength(400);
  expect(new Set(history.calls.map((c) => c.id))).toEqual(new Set(Array.from({ length: 400 }, (_, i) => `chunk-${i}`)));
  const last = history.calls.find((c) => c.id === 'chunk-399')!;
  expect(JSON.parse(last.arguments)).toEqual({ text: `é☕ "399" \\ ${'x'.repeat(798)}` });
  // and the database file itself, read beside the broker (the history filed what waited first)
  const db = new Database(join(home, 'airlock.db'), { readonly: true, fileMustExist: true });
  try {
    const rows = db.prepare("SELECT id, arguments FROM journal WHERE server = 'chunks' ORDER BY id").all() as { id: string; arguments: string }[];
    expect(rows).toHaveLength(400);
    expect(JSON.parse(rows.find((r) => r.id === 'chunk-399')!.arguments)).toEqual({ text: `é☕ "399" \\ ${'x'.repeat(798)}` });
  } finally {
    db.close();
  }
  wrapper.destroy();
});
