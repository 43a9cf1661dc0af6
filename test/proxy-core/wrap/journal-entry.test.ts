/**
 * A call's journal entry as the wrapper writes it: put together from pieces, so it is held here to the record
 * written out field by field (key order, values, which fields are left out) and to JSON.stringify of that record
 * byte for byte, over calls in every state and texts that need escaping.
 */
import { describe, expect, test } from 'vitest';
import type { CallRecord } from '../../../proxy-core/src/protocol/api.js';
import { LIMITS } from '../../../proxy-core/src/protocol/limits.js';
import { traceparentOf } from '../../../proxy-core/src/protocol/trace-context.js';
import { Call } from '../../../proxy-core/src/wrap/call.js';
import { JournalEncoder } from '../../../proxy-core/src/wrap/journal-entry.js';

/** The record of a call, written out plainly: what the encoder's text must be the JSON of. */
function recordOf(call: Call, client: string, server: string): CallRecord {
  const shown = call.argsShown();
  const r: CallRecord = {
    id: call.callId,
    client,
    server,
    tool: call.tool.slice(0, LIMITS.toolName),
    arguments: shown.text,
    argsTruncated: shown.truncated,
    argsBytes: shown.bytes,
    class: call.verdict?.class ?? 'unclassifiable',
    reasons: call.internal ? [call.internal.note, ...(call.verdict?.reasons ?? [])] : (call.verdict?.reasons ?? []),
    decision: call.decision ?? 'deny',
    decidedBy: call.decidedBy ?? 'error',
    detail: call.detail.slice(0, LIMITS.detail),
    outcome: call.outcome,
    startedAt: call.startedAt,
  };
  if (call.knownArgsSha256 !== undefined) r.argsSha256 = call.knownArgsSha256;
  if (call.ticketId !== undefined) r.ticketId = call.ticketId;
  if (call.result) {
    r.result = call.result.text;
    r.resultTruncated = call.result.truncated;
    r.resultBytes = call.result.bytes;
  }
  if (call.askedAt !== undefined) r.askedAt = call.askedAt;
  if (call.decidedAt !== undefined) r.decidedAt = call.decidedAt;
  if (call.forwardedAt !== undefined) r.forwardedAt = call.forwardedAt;
  if (call.finishedAt !== undefined) r.finishedAt = call.finishedAt;
  if (call.durationMs !== undefined) r.durationMs = call.durationMs;
  const traceparent = traceparentOf(call.message.params);
  if (traceparent) r.traceparent = traceparent;
  return r;
}

let n = 0;
function call(tool: string, args: Record<string, unknown>, params: Record<string, unknown> = {}): Call {
  n++;
  return new Call({
    id: n,
    key: `n:${n}`,
    callId: `pfx-${n}`,
    tool,
    args,
    message: { jsonrpc: '2.0', id: n, method: 'tools/call', params: { name: tool, arguments: args, ...params } },
    progressToken: undefined,
    startedAt: 1_733_000_000_000 + n,
    startedMono: n,
  });
}

/** Texts a JSON writer must escape, or may get wrong: quotes, backslashes, control characters, lone surrogates. */
const AWKWARD = ['plain', 'quote " and \\ backslash', 'line\nbreak\ttab\u0000nul\u001f', 'lone \ud800 high', 'lone \udfff low', 'pair 😀 ok', '\u2028\u2029', '</script>', 'ünïcödé ✓', ''];

const CLIENT = 'Claude "Desktop"';
const SERVER = 'fs\u0001server';

describe("a call's journal entry", () => {
  const encoder = new JournalEncoder(CLIENT, SERVER);

  const states: [string, () => Call][] = [
    [
      'decided, not sent: a denial',
      () => {
        const c = call('delete_all', { path: '/' });
        c.verdict = { name: 'delete_all', class: 'destructive', reasons: ['declares destructiveHint', 'name says delete'], declared: undefined };
        c.end('deny', 'rule', 'denied by rule r2', 'not-run');
        return c;
      },
    ],
    [
      'forwarded and pending, with its hash, ticket and trace',
      () => {
        const c = call('write_file', { path: '/a', content: 'x' }, { _meta: { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' } });
        c.verdict = { name: 'write_file', class: 'mutating', reasons: [], declared: undefined };
        c.argsSha256();
        c.ticketId = 'tk-1';
        c.askedAt = c.startedAt + 1;
        c.decision = 'allow';
        c.decidedBy = 'user';
        c.decidedAt = c.startedAt + 3000;
        c.to('preparing');
        c.forward();
        return c;
      },
    ],
    [
      'finished with a result',
      () => {
        const c = call('echo', { text: 'hi' });
        c.verdict = { name: 'echo', class: 'read-only-trusted', reasons: ['declares readOnlyHint'], declared: undefined };
        c.decision = 'allow';
        c.decidedBy = 'rule';
        c.detail = 'allowed by rule r1';
        c.decidedAt = c.startedAt;
        c.to('preparing');
        c.forward();
        c.result = { text: '{"content":[{"type":"text","text":"Echo: hi"}]}', truncated: false, bytes: 47 };
        c.finish({ by: 'server', outcome: 'ok' });
        return c;
      },
    ],
    [
      "a call of Airlock's own (an undo's inverse): its note comes first among the reasons",
      () => {
        const c = new Call({ id: 'airlock-1', key: 's:airlock-1', callId: 'undo-1', tool: 'restore', args: { v: 1 }, message: { jsonrpc: '2.0', id: 'airlock-1', method: 'tools/call', params: {} }, progressToken: undefined, startedAt: 5, startedMono: 5, internal: { note: 'undo of call c-9, asked by the user', end: () => {} } });
        c.verdict = { name: 'restore', class: 'mutating', reasons: ['r'], declared: undefined };
        c.end('deny', 'estop', 'E-Stop is on', 'not-run');
        return c;
      },
    ],
    [
      'with no verdict at all, cancelled while running, and a time that is not finite',
      () => {
        const c = call('x', {});
        c.to('preparing');
        c.forward();
        c.endWhileRunning('estop', 'E-Stop');
        c.durationMs = Number.NaN;
        return c;
      },
    ],
  ];

  test.each(states)('%s: the text is the record, byte for byte', (_name, make) => {
    const c = make();
    const e = encoder.entry(c);
    const record = recordOf(c, CLIENT, SERVER);
    expect(e.text).toBe(JSON.stringify(record));
    expect(JSON.parse(e.text)).toEqual(JSON.parse(JSON.stringify(record)));
    expect(e.id).toBe(c.callId);
    expect(e.open).toBe(c.outcome === 'pending' || c.outcome === 'cancelled');
    expect(e.executed).toBe(c.forwardedAt !== undefined);
  });

  test('texts that need escaping, in every field that carries one, come back as they were', () => {
    for (const s of AWKWARD) {
      const c = call(s, { [s]: s });
      c.verdict = { name: s, class: 'unclassifiable', reasons: [s, s], declared: undefined };
      c.end('deny', 'user', s, 'not-run');
      c.ticketId = s;
      const e = encoder.entry(c);
      expect(e.text).toBe(JSON.stringify(recordOf(c, CLIENT, SERVER)));
      const back = JSON.parse(e.text) as CallRecord;
      expect([back.tool, back.detail, back.reasons[0], back.ticketId, back.client, back.server]).toEqual([s, s, s, s, CLIENT, SERVER]);
      expect(e.text).not.toContain('\n');
    }
  });

  test('what is kept between entries (the tool, the detail, the reasons) never leaks into the wrong one', () => {
    const enc = new JournalEncoder('c', 's');
    const verdicts = [0, 1, 2].map((k) => ({ name: 't', class: 'mutating' as const, reasons: [`reason ${k}`], declared: undefined }));
    for (let i = 0; i < 600; i++) {
      const c = call(`tool-${i % 7}`, { i });
      c.verdict = verdicts[i % 3];
      c.decision = 'allow';
      c.decidedBy = i % 2 ? 'rule' : 'session';
      c.detail = `allowed by rule r${i % 5}`;
      c.decidedAt = c.startedAt + (i % 3);
      c.to('preparing');
      c.forward();
      c.markForwarded(i % 2 ? 1_733_000_000_000 : 1_733_000_000_001, 0);
      c.finish({ by: 'server', outcome: i % 5 ? 'ok' : 'tool-error' });
      c.durationMs = (i % 7) / 1000;
      expect(enc.entry(c).text).toBe(JSON.stringify(recordOf(c, 'c', 's')));
    }
  });

  test('a tool name and a detail past their limits are cut as the record cuts them', () => {
    const c = call('t'.repeat(LIMITS.toolName + 10), {});
    c.end('deny', 'rule', 'd'.repeat(LIMITS.detail + 10), 'not-run');
    const back = JSON.parse(encoder.entry(c).text) as CallRecord;
    expect(back.tool).toHaveLength(LIMITS.toolName);
    expect(back.detail).toHaveLength(LIMITS.detail);
  });
});
