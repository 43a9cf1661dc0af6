import { describe, expect, test } from 'vitest';
import { type Channel, IpcError } from '../../../proxy-core/src/ipc/channel.js';
import { LIMITS } from '../../../proxy-core/src/protocol/limits.js';
import { WrapperMethod } from '../../../proxy-core/src/protocol/names.js';
import { CatalogReports, MAX_NOTES_BEHIND, MAX_WAITING_REPORTS } from '../../../proxy-core/src/wrap/catalog-reports.js';
import { channelPair } from '../../helpers/memory-channel.js';

const IN_FLIGHT = LIMITS.catalogReportsInFlight;

/** A broker end that answers catalog reports only when told to, oldest first, and counts the most open at once. */
function broker() {
  const [wrapperEnd, brokerEnd] = channelPair();
  const received: string[] = [];
  const open: { name: string; answer: (refuse?: string) => void }[] = [];
  let most = 0;
  brokerEnd.setHandlers({
    // a note is read in its place among the reports: `note:<what it says>`
    notify: (method, params) => void received.push(`${method}:${String(params)}`),
    request: (method, params) => {
      if (method !== WrapperMethod.catalogUpdate) throw new Error(method);
      const name = (params as { problems: string[] }).problems[0]!;
      received.push(name);
      return new Promise((resolve, reject) => {
        open.push({
          name,
          answer: (refuse) => {
            open.splice(open.findIndex((o) => o.name === name), 1);
            if (refuse) reject(new IpcError('bad-request', refuse));
            else resolve({ ok: true });
          },
        });
        most = Math.max(most, open.length);
      });
    },
  });
  return { wrapperEnd, brokerEnd, received, open, most: () => most };
}

const report = (name: string) => ({ verdicts: [], problems: [name] });
const names = (n: number, prefix = 'r') => Array.from({ length: n }, (_, i) => `${prefix}${i}`);
const settle = async () => {
  for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
};

describe('catalog reports to the broker', () => {
  test(`go at once while fewer than ${IN_FLIGHT} are unanswered, then each as one is answered, in the order listed`, async () => {
    const b = broker();
    const reports = new CatalogReports(() => b.wrapperEnd, () => {});
    const all = names(IN_FLIGHT + 3);
    for (const n of all) reports.add(report(n));
    await settle();
    // the first ones are on the wire at once: the broker reads what they list before an ask sent after them
    expect(b.received).toEqual(all.slice(0, IN_FLIGHT));
    expect(reports.pending).toBe(all.length);
    while (b.open.length > 0) {
      b.open[0]!.answer();
      await settle();
    }
    expect(b.received).toEqual(all);
    expect(b.most()).toBe(IN_FLIGHT);
    expect(reports.pending).toBe(0);
  });

  test('a refusal is logged and the next report goes; a closed connection sends its unanswered reports again on the next one', async () => {
    const b = broker();
    const logged: string[] = [];
    let channel: Channel | null = b.wrapperEnd;
    const reports = new CatalogReports(() => channel, (m) => logged.push(m));
    const first = names(IN_FLIGHT + 1);
    for (const n of first) reports.add(report(n));
    await settle();
    b.open[0]!.answer('not a catalog');
    await settle();
    expect(logged).toEqual(['airlock: catalog update failed: not a catalog']);
    expect(b.received).toEqual(first);
    // the broker goes away with the others unanswered: they go again on the next connection, first, in order
    channel = null;
    b.wrapperEnd.destroy();
    await settle();
    reports.add(report('late'));
    await settle();
    expect(reports.pending).toBe(IN_FLIGHT + 1);
    const again = broker();
    channel = again.wrapperEnd;
    reports.reconnected();
    await settle();
    expect(again.received).toEqual([...first.slice(1), 'late'].slice(0, IN_FLIGHT));
    while (again.open.length > 0) {
      again.open[0]!.answer();
      await settle();
    }
    expect(again.received).toEqual([...first.slice(1), 'late']);
    // a broker connected anew with nothing waiting still gets the newest catalog: it may not know this wrapper's
    const third = broker();
    channel = third.wrapperEnd;
    reports.reconnected();
    await settle();
    expect(third.received).toEqual(['late']);
  });

  test(`past ${MAX_WAITING_REPORTS} waiting, the newest takes the place of the last waiting, and the first ones keep theirs`, async () => {
    const b = broker();
    const reports = new CatalogReports(() => b.wrapperEnd, () => {});
    const all = names(IN_FLIGHT + MAX_WAITING_REPORTS + 5);
    for (const n of all) reports.add(report(n));
    expect(reports.pending).toBe(IN_FLIGHT + MAX_WAITING_REPORTS);
    await settle();
    while (b.open.length > 0) {
      b.open[0]!.answer();
      await settle();
    }
    expect(b.received).toEqual([...all.slice(0, IN_FLIGHT + MAX_WAITING_REPORTS - 1), all.at(-1)]);
  });

  test('a note sent after reports that still wait here is read after them (the newest), never before; with none waiting it goes at once', async () => {
    const b = broker();
    const logs: string[] = [];
    const reports = new CatalogReports(() => b.wrapperEnd, (m) => logs.push(m));
    const note = (what: string) => ({ send: (channel: Channel) => channel.notify('note', what) });
    // nothing waits: at once
    reports.afterReports(note('first'));
    await settle();
    expect(b.received).toEqual(['note:first']);
    const all = names(IN_FLIGHT + 2);
    for (const n of all) reports.add(report(n));
    // two reports wait behind the ones in flight: the note goes behind the newest of them
    reports.afterReports(note('checked'));
    await settle();
    expect(b.received).toEqual(['note:first', ...all.slice(0, IN_FLIGHT)]);
    while (b.open.length > 0) {
      b.open[0]!.answer();
      await settle();
    }
    expect(b.received).toEqual(['note:first', ...all, 'note:checked']);
    // past the bound, a note is dropped and that is said once
    for (const n of names(IN_FLIGHT + 1, 'q')) reports.add(report(n));
    for (let i = 0; i < MAX_NOTES_BEHIND + 5; i++) reports.afterReports(note(`n${i}`));
    expect(logs).toHaveLength(1);
    expect(logs[0]).toContain('structuredContent are skipped and the calls that ask are refused');
    while (b.open.length > 0) {
      b.open[0]!.answer();
      await settle();
    }
    const after = b.received.slice(b.received.indexOf(`q${IN_FLIGHT}`) + 1);
    expect(after).toEqual(Array.from({ length: MAX_NOTES_BEHIND }, (_, i) => `note:n${i}`));
  });

  test('notes behind a report that a newer one replaces (past MAX_WAITING_REPORTS) go behind the newer one', async () => {
    const b = broker();
    const reports = new CatalogReports(() => b.wrapperEnd, () => {});
    const all = names(IN_FLIGHT + MAX_WAITING_REPORTS);
    for (const n of all) reports.add(report(n));
    reports.afterReports({ send: (channel) => channel.notify('note', 'behind') });
    reports.add(report('newest'));
    await settle();
    while (b.open.length > 0) {
      b.open[0]!.answer();
      await settle();
    }
    expect(b.received.slice(-2)).toEqual(['newest', 'note:behind']);
    expect(b.received).not.toContain(all.at(-1));
  });

  describe('an ask (its ticket shows the person the listing its call was decided on)', () => {
    /** A broker end that answers asks at once with the call id, and reports when told; `received` in order. */
    function askingBroker() {
      const b = broker();
      const seen = b.received;
      const answerReports = b.brokerEnd;
      answerReports.setHandlers({
        notify: (method, params) => void seen.push(`${method}:${String(params)}`),
        request: (method, params) => {
          if (method === WrapperMethod.ask) {
            const callId = (params as { callId: string }).callId;
            seen.push(`ask:${callId}`);
            return { ticketId: `t-${callId}` };
          }
          const name = (params as { problems: string[] }).problems[0]!;
          seen.push(name);
          return new Promise((resolve) => b.open.push({ name, answer: () => (b.open.splice(b.open.findIndex((o) => o.name === name), 1), resolve({ ok: true })) }));
        },
      });
      return b;
    }
    const ask = (reports: CatalogReports, callId: string) => reports.ask(callId, (channel) => channel.request<{ ticketId: string }>(WrapperMethod.ask, { callId }));

    test('goes at once when no report waits, and after the newest waiting report otherwise, never before it', async () => {
      const b = askingBroker();
      const reports = new CatalogReports(() => b.wrapperEnd, () => {});
      await expect(ask(reports, 'c0')).resolves.toEqual({ ticketId: 't-c0' });
      const all = names(IN_FLIGHT + 2);
      for (const n of all) reports.add(report(n));
      let answered: unknown;
      void ask(reports, 'c1').then((a) => (answered = a));
      await settle();
      expect(b.received).toEqual(['ask:c0', ...all.slice(0, IN_FLIGHT)]);
      expect(answered).toBeUndefined();
      while (b.open.length > 0) {
        b.open[0]!.answer();
        await settle();
      }
      expect(b.received).toEqual(['ask:c0', ...all, 'ask:c1']);
      expect(answered).toEqual({ ticketId: 't-c1' });
    });

    test('one whose call ends while it waits is never sent; one past the bound is refused, not sent ahead', async () => {
      const b = askingBroker();
      const logs: string[] = [];
      const reports = new CatalogReports(() => b.wrapperEnd, (m) => logs.push(m));
      for (const n of names(IN_FLIGHT + 1)) reports.add(report(n));
      const gone = ask(reports, 'gone');
      expect(reports.withdraw('gone')).toBe(true);
      await expect(gone).rejects.toMatchObject({ code: 'cancelled' });
      expect(reports.withdraw('gone')).toBe(false);
      const waiting = Array.from({ length: MAX_NOTES_BEHIND - 1 }, (_, i) => ask(reports, `w${i}`));
      await expect(ask(reports, 'over')).rejects.toMatchObject({ code: 'busy' });
      expect(logs).toHaveLength(1);
      await settle();
      while (b.open.length > 0) {
        b.open[0]!.answer();
        await settle();
      }
      await Promise.all(waiting);
      const asks = b.received.filter((r) => r.startsWith('ask:'));
      expect(asks).toEqual(Array.from({ length: MAX_NOTES_BEHIND - 1 }, (_, i) => `ask:w${i}`));
      expect(b.received.indexOf('ask:w0')).toBeGreaterThan(b.received.indexOf(`r${IN_FLIGHT}`));
    });

    test('the connection lost while it waits: refused at once (its call fails closed); a structuredContent note waits for the next connection', async () => {
      const b = askingBroker();
      let channel: Channel | null = b.wrapperEnd;
      const reports = new CatalogReports(() => channel, () => {});
      for (const n of names(IN_FLIGHT + 1)) reports.add(report(n));
      const asked = ask(reports, 'c1');
      reports.afterReports({ send: (ch) => ch.notify('note', 'checked') });
      channel = null;
      b.wrapperEnd.destroy();
      reports.lost();
      await expect(asked).rejects.toMatchObject({ code: 'closed' });
      // asked with no connection: refused too, not kept for the next one
      await expect(ask(reports, 'c2')).rejects.toMatchObject({ code: 'closed' });
      const next = askingBroker();
      channel = next.wrapperEnd;
      reports.reconnected();
      await settle();
      while (next.open.length > 0) {
        next.open[0]!.answer();
        await settle();
      }
      expect(next.received.at(-1)).toBe('note:checked');
      expect(next.received.filter((r) => r.startsWith('ask'))).toEqual([]);
    });
  });
});
