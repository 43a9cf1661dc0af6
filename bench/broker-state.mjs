// A running broker, asked over its socket, as a bench needs it: readied for a measure of allowed calls (a rule, the
// tripwire off, E-Stop released), and waited for between measures: that what the wrappers sent is acknowledged (on
// disk in the journal's intake), and that the broker has filed it into the journal's tables, so that the filing
// (done once the calls stop) is not measured against the next mode's run.

import { median } from './stats.mjs';

/** Until the broker has filed every journal entry it took in (status.journalPending is 0); the ms it took. */
export async function settled(broker, timeoutMs = 60_000) {
  const t0 = performance.now();
  for (;;) {
    const s = await broker.call('status', {});
    if ((s.journalPending ?? 0) === 0) return performance.now() - t0;
    if (performance.now() - t0 > timeoutMs) throw new Error(`the broker still has ${s.journalPending} journal entries to file after ${timeoutMs} ms`);
    // not too often: a status is a few queries, and the broker's CPU is part of what is measured
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** Until every connected wrapper of `server` holds no journal entry the broker has not acknowledged. */
export async function acknowledged(broker, server, timeoutMs = 60_000) {
  const t0 = performance.now();
  for (;;) {
    const { sessions } = await broker.call('status', {});
    const held = await Promise.all(
      sessions
        .filter((s) => s.server === server)
        .map((s) => broker.call('wrapper.request', { sessionId: s.id, method: 'wrapper.status' }).then((r) => r.answer?.journalHeld ?? 0, () => 0)),
    );
    if (held.every((n) => n === 0)) return performance.now() - t0;
    if (performance.now() - t0 > timeoutMs) throw new Error(`wrappers of ${server} still hold ${held.join(', ')} journal entries after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/**
 * Ready the broker for a measure of allowed calls to `server`: an allow rule for it, the tripwire off (thousands
 * of allowed calls a second is what it is there to stop) and E-Stop released, whatever the measures before left
 * behind. The function it returns takes the rule away and puts the tripwire back.
 */
export async function allowedCallsTo(broker, server) {
  const rule = await broker.call('rules.add', { action: 'allow', server, tool: '*' });
  const tripwireBefore = (await broker.call('settings.list', {})).find((x) => x.key === 'tripwire')?.value;
  await broker.call('settings.set', { key: 'tripwire', value: 'off' });
  await broker.call('estop', { on: false });
  return async () => {
    await broker.call('rules.remove', { id: rule.id }).catch(() => {});
    if (tripwireBefore !== undefined) await broker.call('settings.set', { key: 'tripwire', value: tripwireBefore }).catch(() => {});
  };
}

/**
 * The broker's answers to a front end's `pending`, asked every `everyMs` (5) while `work` runs: how long the
 * slowest took (ms), and the median. A wrapper calls a broker that leaves its ping unanswered for 1 s dead.
 */
export async function brokerAnswers(broker, work, everyMs = 5) {
  let stop = false;
  const times = [];
  const poll = (async () => {
    while (!stop) {
      const t = performance.now();
      await broker.call('pending', {});
      times.push(performance.now() - t);
      await new Promise((r) => setTimeout(r, everyMs));
    }
  })();
  try {
    await work();
  } finally {
    stop = true;
    await poll;
  }
  return { worst: Math.max(...times), median: median(times), count: times.length };
}
