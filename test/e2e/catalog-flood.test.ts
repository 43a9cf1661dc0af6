/**
 * A wrapper connection that sends catalog reports without waiting for their answers, against a real broker:
 * the agent can be that connection (it reads the socket's secret from the data dir). The broker takes a few
 * reports of a connection at a time (LIMITS.catalogReportsInFlight) and refuses the others at once, so they never
 * pile up in its memory; it keeps the connection and keeps answering meanwhile, and what it pinned is the first
 * report.
 */
import { afterEach, expect, test } from 'vitest';
import { connectBroker } from '../../proxy-core/src/ipc/connect.js';
import { LIMITS } from '../../proxy-core/src/protocol/limits.js';
import { WrapperMethod } from '../../proxy-core/src/protocol/names.js';
import type { PinInfo } from '../../proxy-core/src/protocol/api.js';
import { toolDefinition } from '../../proxy-core/src/classify/definition.js';
import { cleanup } from '../helpers/airlock.js';
import { startBroker } from '../helpers/e2e.js';

afterEach(cleanup);

const verdict = (name: string) => {
  const tool = { name, description: `tool ${name}: ${'lorem ipsum '.repeat(20)}`, inputSchema: { type: 'object' } };
  return { name, class: 'mutating', reasons: [], definition: toolDefinition(name, [tool]) };
};

/** Tools in each report of the flood. */
const TOOLS = 200;

/** `tools` tools, and one of its own: each report pins a tool, so its answer waits for the wrapper's acknowledgement. */
function report(generation: number, tools: number) {
  return { verdicts: [...Array.from({ length: tools }, (_, i) => verdict(`t${i}`)), verdict(`new${generation}`)], problems: [] };
}

test('reports sent without waiting are refused past the few being written; the broker keeps the connection and keeps answering', async () => {
  const { home, broker } = await startBroker();
  const wrapper = await connectBroker({ dir: home, role: 'wrapper' });
  // a wrapper acknowledges each policy pushed to it (one that does not is let go)
  wrapper.setHandlers({ notify: (method, params) => method === 'policy' && wrapper.notify('policy.ack', { version: (params as { version: number }).version }) });
  await wrapper.request(WrapperMethod.sessionOpen, { client: 'flood', server: 'flooded', command: ['x'], pid: process.pid, trustFlag: false });
  // 60 reports of 200 tools, each about 60 KB on the wire, sent back to back; the acknowledgements of the pushes
  // they cause are read only behind them, so the first reports stay unanswered until the flood has been read. (The
  // flood stays well under what the broker reads within its 1.5 s wait for an acknowledgement on a loaded
  // machine: past that it cuts the connection off, as it should a wrapper that does not acknowledge.)
  const sent = Array.from({ length: 60 }, (_, g) => wrapper.request(WrapperMethod.catalogUpdate, report(g, TOOLS)).then(() => 'ok', (err: { code?: string }) => err.code ?? 'error'));
  // the broker answers a front end while the flood is read and the first report is written
  const t0 = performance.now();
  await broker.call('pending', {});
  const answeredInMs = performance.now() - t0;
  const outcomes = await Promise.all(sent);
  // none lost the connection
  expect(outcomes[0]).toBe('ok');
  expect(outcomes.filter((o) => o !== 'ok' && o !== 'busy')).toEqual([]);
  // the rest came while those were still being written
  expect(outcomes.slice(0, LIMITS.catalogReportsInFlight)).toEqual(Array(LIMITS.catalogReportsInFlight).fill('ok'));
  expect(outcomes.filter((o) => o === 'busy')).toHaveLength(60 - LIMITS.catalogReportsInFlight);
  expect(answeredInMs).toBeLessThan(1000);
  // what was pinned is what the reports taken listed: the tools and each one's own
  const pins = (await broker.call('pins.list', { server: 'flooded' })) as PinInfo[];
  expect(pins).toHaveLength(TOOLS + LIMITS.catalogReportsInFlight);
  expect(pins.find((p) => p.tool === 't0')!.fingerprint).toBe(verdict('t0').definition.fingerprint);
  // a report sent once the last is answered is taken
  await expect(wrapper.request(WrapperMethod.catalogUpdate, report(99, 10))).resolves.toEqual({ ok: true });
  wrapper.destroy();
}, 60_000);
