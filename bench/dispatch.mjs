// The broker's dispatch chain: CPU per request from the connection's request handler to the method's answer
// (the method looked up, the caller's role checked against its declaration, the params checked against its
// schema, disk errors translated), against the same handler called directly with checked params, in the same
// run. Two methods: a front end's `pending` and a wrapper's `call.ask` while E-Stop is on (answered at once,
// the wrapper's hot path). In process, no socket: what the chain adds, not what a frame costs.
// Imported by run.mjs or run on its own (`node bench/dispatch.mjs`); not a test: nothing here passes or fails.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Broker } from '../proxy-core/dist/broker/broker.js';
import { Store } from '../proxy-core/dist/broker/db/store.js';

/** A channel with no socket: the handlers the broker installs; a policy push is acknowledged, other notes dropped. */
function channel() {
  const ch = {
    handlers: null,
    setHandlers: (h) => (ch.handlers = h),
    setRaw: () => {},
    notify: (m, p) => {
      if (m === 'policy') queueMicrotask(() => ch.handlers.notify('policy.ack', { version: p.version }));
    },
    write: () => true,
    destroy() {},
    end() {},
    socket: { writableLength: 0 },
    isOpen: true,
    request: async () => ({}),
  };
  return ch;
}

/** CPU µs per run of `fn` (sync or a promise), after a warm-up. */
async function cpuPer(fn, n) {
  for (let i = 0; i < n / 10; i++) await fn();
  const t = process.cpuUsage();
  for (let i = 0; i < n; i++) await fn();
  const u = process.cpuUsage(t);
  return (u.user + u.system) / n;
}

export async function dispatchRows({ quick = false } = {}) {
  const n = quick ? 20_000 : 200_000;
  const dir = mkdtempSync(join(tmpdir(), 'al-bench-dispatch-'));
  const store = new Store(join(dir, 'airlock.db'));
  const broker = new Broker({ presence: { required: false }, store, dataDir: dir, ticketTimeoutSeconds: 120, ackTimeoutMs: 200 });
  try {
    const front = channel();
    broker.attach(front, 'cli');
    const wrapper = channel();
    broker.attach(wrapper, 'wrapper');
    await wrapper.handlers.request('session.open', { client: 'bench', server: 'bench', command: ['x'], pid: 1, trustFlag: false });
    await broker.setEstop(true);
    const ask = { callId: 'c', tool: 't', arguments: { path: '/tmp/x' }, class: 'mutating', reasons: [] };
    const direct = (name, params, context) => {
      const bound = broker.handlers.get(name);
      const checked = bound.decl.params.parse(params);
      return () => bound.run(checked, context);
    };
    const wrapperContext = { channel: wrapper, session: broker.sessions.all()[0], subscriptions: new Set() };
    const frontContext = { channel: front, session: null, subscriptions: new Set() };
    const rows = [];
    for (const [label, name, params, ch, context] of [
      ['front end `pending`', 'pending', {}, front, frontContext],
      ['wrapper `call.ask`, E-Stop on', 'call.ask', ask, wrapper, wrapperContext],
    ]) {
      const bare = await cpuPer(direct(name, params, context), n);
      const chain = await cpuPer(() => ch.handlers.request(name, params), n);
      rows.push([`dispatch CPU per request, ${label} (µs)`, bare.toFixed(2), '–', chain.toFixed(2), `+${(chain - bare).toFixed(2)} µs for the chain (handler alone: first column)`, '(for information)']);
    }
    return rows;
  } finally {
    broker.shutdown();
    store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  for (const row of await dispatchRows({ quick: process.argv.includes('--quick') })) console.log(row.join(' | '));
}
