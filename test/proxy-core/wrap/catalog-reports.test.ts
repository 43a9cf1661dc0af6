import { describe, expect, test } from 'vitest';
import { type Channel, IpcError } from '../../../proxy-core/src/ipc/channel.js';
import { WrapperMethod } from '../../../proxy-core/src/protocol/names.js';
import { CatalogReports, MAX_WAITING_REPORTS } from '../../../proxy-core/src/wrap/catalog-reports.js';
import { channelPair } from '../../helpers/memory-channel.js';

/** A broker end that answers catalog reports only when told to, and refuses one that comes while another is open. */
function broker() {
  const [wrapperEnd, brokerEnd] = channelPair();
  const received: string[] = [];
  const open: { name: string; answer: (refuse?: string) => void }[] = [];
  let overlapped = 0;
  brokerEnd.setHandlers({
    request: (method, params) => {
      if (method !== WrapperMethod.catalogUpdate) throw new Error(method);
      const name = (params as { problems: string[] }).problems[0]!;
      received.push(name);
      if (open.length > 0) overlapped++;
      return new Promise((resolve, reject) => {
        open.push({
          name,
          answer: (refuse) => {
            open.splice(open.findIndex((o) => o.name === name), 1);
            if (refuse) reject(new IpcError('bad-request', refuse));
            else resolve({ ok: true });
          },
        });
      });
    },
  });
  return { wrapperEnd, brokerEnd, received, open, overlapped: () => overlapped };
}

const report = (name: string) => ({ verdicts: [], problems: [name] });
const settle = async () => {
  for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
};

describe('catalog reports to the broker', () => {
  test('go one at a time, in the order listed, each once the broker has answered the one before', async () => {
    const b = broker();
    const reports = new CatalogReports(() => b.wrapperEnd, () => {});
    reports.add(report('A'));
    reports.add(report('B'));
    reports.add(report('C'));
    await settle();
    expect(b.received).toEqual(['A']);
    expect(reports.pending).toBe(3);
    b.open[0]!.answer();
    await settle();
    expect(b.received).toEqual(['A', 'B']);
    b.open[0]!.answer();
    await settle();
    b.open[0]!.answer();
    await settle();
    expect(b.received).toEqual(['A', 'B', 'C']);
    expect(b.overlapped()).toBe(0);
    expect(reports.pending).toBe(0);
  });

  test('a refusal is logged and the next report goes; a closed connection keeps its report for the next one', async () => {
    const b = broker();
    const logged: string[] = [];
    let channel: Channel | null = b.wrapperEnd;
    const reports = new CatalogReports(() => channel, (m) => logged.push(m));
    reports.add(report('A'));
    reports.add(report('B'));
    await settle();
    b.open[0]!.answer('not a catalog');
    await settle();
    expect(logged).toEqual(['airlock: catalog update failed: not a catalog']);
    expect(b.received).toEqual(['A', 'B']);
    // the broker goes away with B unanswered: B waits for the next connection, then goes first
    channel = null;
    b.wrapperEnd.destroy();
    await settle();
    reports.add(report('C'));
    await settle();
    expect(reports.pending).toBe(2);
    const again = broker();
    channel = again.wrapperEnd;
    reports.reconnected();
    await settle();
    expect(again.received).toEqual(['B']);
    again.open[0]!.answer();
    await settle();
    expect(again.received).toEqual(['B', 'C']);
    again.open[0]!.answer();
    await settle();
    // a broker connected anew with nothing waiting still gets the newest catalog: it may not know this wrapper's
    const third = broker();
    channel = third.wrapperEnd;
    reports.reconnected();
    await settle();
    expect(third.received).toEqual(['C']);
  });

  test(`past ${MAX_WAITING_REPORTS} waiting, the newest takes the place of the last waiting, and the first ones keep theirs`, async () => {
    const b = broker();
    const reports = new CatalogReports(() => b.wrapperEnd, () => {});
    const names = Array.from({ length: MAX_WAITING_REPORTS + 5 }, (_, i) => `r${i}`);
    for (const n of names) reports.add(report(n));
    expect(reports.pending).toBe(MAX_WAITING_REPORTS);
    const sent: string[] = [];
    for (let i = 0; i < MAX_WAITING_REPORTS; i++) {
      await settle();
      sent.push(...b.received.splice(0));
      b.open[0]!.answer();
    }
    await settle();
    expect(sent).toEqual([...names.slice(0, MAX_WAITING_REPORTS - 1), names.at(-1)]);
  });
});
