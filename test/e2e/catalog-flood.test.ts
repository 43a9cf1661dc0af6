/**
 * A wrapper connection that sends catalog reports without waiting for their answers, against a real broker:
 * the agent can be that connection (it reads the socket's secret from the data dir). The broker writes one report
 * of a connection at a time and refuses the others at once, so they never pile up in its memory; it keeps the
 * connection and keeps answering meanwhile, and what it pinned is the first report. (A broker that queued them
 * all read the wrapper's acknowledgements of its policy pushes only behind the flood, and let the connection
 * go for not acknowledging, about twenty reports in.)
 */
import { afterEach, expect, test } from 'vitest';
import { connectBroker } from '../../proxy-core/src/ipc/connect.js';
import { WrapperMethod } from '../../proxy-core/src/protocol/names.js';
import type { PinInfo } from '../../proxy-core/src/protocol/api.js';
import { toolDefinition } from '../../proxy-core/src/classify/definition.js';
import { cleanup } from '../helpers/airlock.js';
import { startBroker } from '../helpers/e2e.js';

afterEach(cleanup);

function report(generation: number, tools: number) {
  const verdicts = Array.from({ length: tools }, (_, i) => {
    const tool = { name: `t${i}`, description: `tool ${i}, listing ${generation}: ${'lorem ipsum '.repeat(20)}`, inputSchema: { type: 'object' } };
    return { name: tool.name, class: 'mutating', reasons: [], definition: toolDefinition(tool.name, [tool]) };
  });
  return { verdicts, problems: [] };
}

test('reports sent without waiting are refused while one is written; the broker keeps the connection and keeps answering', async () => {
  const { home, broker } = await startBroker();
  const wrapper = await connectBroker({ dir: home, role: 'wrapper' });
  // a wrapper acknowledges each policy pushed to it (one that does not is let go)
  wrapper.setHandlers({ notify: (method, params) => method === 'policy' && wrapper.notify('policy.ack', { version: (params as { version: number }).version }) });
  await wrapper.request(WrapperMethod.sessionOpen, { client: 'flood', server: 'flooded', command: ['x'], pid: process.pid, trustFlag: false });
  // 60 reports of 2,000 tools, each about 600 KB on the wire: 36 MB sent back to back
  const sent = Array.from({ length: 60 }, (_, g) => wrapper.request(WrapperMethod.catalogUpdate, report(g, 2000)).then(() => 'ok', (err: { code?: string }) => err.code ?? 'error'));
  // the broker answers a front end while the flood is read and the first report is written
  const t0 = performance.now();
  await broker.call('pending', {});
  const answeredInMs = performance.now() - t0;
  const outcomes = await Promise.all(sent);
  // none lost the connection (a broker that queued them all fell behind and let the wrapper go)
  expect(outcomes[0]).toBe('ok');
  expect(outcomes.filter((o) => o !== 'ok' && o !== 'busy')).toEqual([]);
  // most came while the first was still being written
  expect(outcomes.filter((o) => o === 'busy').length).toBeGreaterThan(40);
  expect(answeredInMs).toBeLessThan(1000);
  // what was pinned is a listing the connection sent, every tool of it, the first one's definition first
  const pins = (await broker.call('pins.list', { server: 'flooded' })) as PinInfo[];
  expect(pins).toHaveLength(2000);
  expect(pins.find((p) => p.tool === 't0')!.fingerprint).toBe(report(0, 1).verdicts[0]!.definition.fingerprint);
  // a report sent once the last is answered is taken
  await expect(wrapper.request(WrapperMethod.catalogUpdate, report(99, 10))).resolves.toEqual({ ok: true });
  wrapper.destroy();
}, 60_000);
