/**
 * A call's journal entry as the wrapper sends it: the JSON text of its record, written straight from the call.
 * Every call passes here (tens of thousands a second when a client pipelines): JSON.stringify of a record object
 * made for it cost about 2.2 µs a call, this template 0.7 µs, nearly all of it the escaping of the arguments' and
 * the result's texts. What is the same from call to call (who the wrapper is, the last tool, its verdict's
 * reasons, the last decision's detail, the last millisecond's time) is kept as text. The text holds exactly the
 * keys, in the order, and the values JSON.stringify gives the record (test/proxy-core/wrap/journal-entry.test.ts).
 */
import { LIMITS } from '../protocol/limits.js';
import { traceparentOf } from '../protocol/trace-context.js';
import { LastNumberText, numberText } from '../util/number-text.js';
import type { Call } from './call.js';

export interface JournalEntry {
  readonly id: string;
  /** The entry's JSON text: a CallRecord whose keys come in its order (id, client, server, tool, arguments, …). */
  readonly text: string;
  /** Its outcome may still change (pending, or cancelled while its server runs it): later copies may follow. */
  readonly open: boolean;
  /** The call reached its server: its entry is never dropped to save memory. */
  readonly executed: boolean;
}

const q = JSON.stringify;
/** Classes, decisions, deciders and outcomes: a few words, kept as their JSON text. */
const words = new Map<string, string>();
function word(w: string): string {
  let t = words.get(w);
  if (t === undefined) {
    t = q(w);
    if (words.size < 64) words.set(w, t);
  }
  return t;
}

/** A string as JSON text, cut at `limit`, kept while the next one asked for is the same string. */
class LastText {
  private last = '';
  private text = '""';

  constructor(private readonly limit: number) {}

  of(s: string): string {
    if (s !== this.last) {
      this.last = s;
      this.text = q(s.length > this.limit ? s.slice(0, this.limit) : s);
    }
    return this.text;
  }
}

export class JournalEncoder {
  /** `,"client":…,"server":…,"tool":`: the same in every entry of this wrapper. */
  private readonly who: string;
  private readonly tool = new LastText(LIMITS.toolName);
  private readonly detail = new LastText(LIMITS.detail);
  /** The call's times (whole milliseconds: the steps of a call, and the calls of a millisecond, share them). */
  private readonly times = new LastNumberText();
  private readonly argsBytes = new LastNumberText();
  private readonly resultBytes = new LastNumberText();
  private lastReasons: readonly string[] | undefined;
  private lastReasonsText = '[]';

  constructor(client: string, server: string) {
    this.who = `,"client":${q(client)},"server":${q(server)},"tool":`;
  }

  /** The entry of `call` as it stands now. */
  entry(call: Call): JournalEntry {
    const shown = call.argsShown();
    const outcome = call.outcome;
    let text = `{"id":${q(call.callId)}${this.who}${this.tool.of(call.tool)},"arguments":${q(shown.text)},"argsTruncated":${shown.truncated},"argsBytes":${this.argsBytes.of(shown.bytes)},"class":${word(call.verdict?.class ?? 'unclassifiable')},"reasons":${this.reasons(call)},"decision":${word(call.decision ?? 'deny')},"decidedBy":${word(call.decidedBy ?? 'error')},"detail":${this.detail.of(call.detail)},"outcome":${word(outcome)},"startedAt":${this.times.of(call.startedAt)}`;
    const sha = call.knownArgsSha256;
    if (sha !== undefined) text += `,"argsSha256":${q(sha)}`;
    if (call.ticketId !== undefined) text += `,"ticketId":${q(call.ticketId)}`;
    const result = call.result;
    if (result) text += `,"result":${q(result.text)},"resultTruncated":${result.truncated},"resultBytes":${this.resultBytes.of(result.bytes)}`;
    if (call.askedAt !== undefined) text += `,"askedAt":${this.times.of(call.askedAt)}`;
    if (call.decidedAt !== undefined) text += `,"decidedAt":${this.times.of(call.decidedAt)}`;
    if (call.forwardedAt !== undefined) text += `,"forwardedAt":${this.times.of(call.forwardedAt)}`;
    if (call.finishedAt !== undefined) text += `,"finishedAt":${this.times.of(call.finishedAt)}`;
    if (call.durationMs !== undefined) text += `,"durationMs":${numberText(call.durationMs)}`;
    const traceparent = traceparentOf(call.message.params);
    if (traceparent) text += `,"traceparent":${q(traceparent)}`;
    return { id: call.callId, text: `${text}}`, open: outcome === 'pending' || outcome === 'cancelled', executed: call.forwardedAt !== undefined };
  }

  /** A verdict's reasons (kept while the verdict is the same); a call of Airlock's own says first what it is. */
  private reasons(call: Call): string {
    const reasons = call.verdict?.reasons;
    if (call.internal) return q([call.internal.note, ...(reasons ?? [])]);
    if (reasons === undefined) return '[]';
    if (reasons !== this.lastReasons) {
      this.lastReasons = reasons;
      this.lastReasonsText = q(reasons);
    }
    return this.lastReasonsText;
  }
}
