/**
 * The broker's hand-written journal entry check accepts exactly what the protocol's CallRecordSchema accepts
 * (once over-long texts are cut), so the fast path is the schema, not a second opinion.
 */
import { describe, expect, test } from 'vitest';
import { ARGUMENTS_NOT_RECEIVED, checkEntry } from '../../../proxy-core/src/broker/validate.js';
import { CallRecordSchema } from '../../../proxy-core/src/protocol/api.js';

const session = { info: { id: '6c1f0b1e-0000-4000-8000-000000000000', client: 'cursor', server: 'fs' } };
const base = {
  id: 'w1-1',
  tool: 'write_file',
  arguments: '{"path":"/tmp/x"}',
  argsTruncated: false,
  class: 'mutating',
  reasons: ['declares destructiveHint: false'],
  decision: 'allow',
  decidedBy: 'rule',
  detail: 'allowed by rule r1',
  outcome: 'ok',
  startedAt: 1_700_000_000_000,
};

const cases: [string, Record<string, unknown>][] = [
  ['a minimal record', {}],
  ['every optional field', { argsBytes: 17, argsSha256: 'a'.repeat(64), ticketId: 't1', result: '{"content":[]}', resultTruncated: false, resultBytes: 14, askedAt: 1, decidedAt: 2, forwardedAt: 3, finishedAt: 4, durationMs: 1.5 }],
  ['an unknown class (read as unclassifiable)', { class: 'benign' }],
  ['a missing id', { id: undefined }],
  ['an empty id', { id: '' }],
  ['a long id', { id: 'x'.repeat(129) }],
  ['a numeric id', { id: 7 }],
  ['an unknown decision', { decision: 'maybe' }],
  ['an unknown decidedBy', { decidedBy: 'magic' }],
  ['an unknown outcome', { outcome: 'fine' }],
  ['a string startedAt', { startedAt: '2026' }],
  ['a negative startedAt', { startedAt: -1 }],
  ['a fractional argsBytes', { argsBytes: 1.5 }],
  ['a negative resultBytes', { resultBytes: -1 }],
  ['a null durationMs', { durationMs: null }],
  ['an infinite finishedAt', { finishedAt: Infinity }],
  ['a short hash', { argsSha256: 'abc' }],
  ['an upper-case hash', { argsSha256: 'A'.repeat(64) }],
  ['a long ticket id', { ticketId: 'x'.repeat(65) }],
  ['a result that is not text', { result: { content: [] } }],
  ['argsTruncated not a boolean', { argsTruncated: 'no' }],
  ['resultTruncated not a boolean', { resultTruncated: 1 }],
];

describe('checkEntry agrees with CallRecordSchema', () => {
  test.each(cases)('%s', (_what, over) => {
    const entry = { ...base, ...over };
    for (const [k, v] of Object.entries(over)) if (v === undefined) delete (entry as Record<string, unknown>)[k];
    let fast: unknown;
    let fastOk = true;
    try {
      fast = checkEntry(session, entry);
    } catch {
      fastOk = false;
    }
    const reference = CallRecordSchema.safeParse({ ...entry, sessionId: session.info.id, client: 'cursor', server: 'fs' });
    expect(fastOk).toBe(reference.success);
    if (fastOk && reference.success) expect(fast).toEqual(reference.data);
  });

  test('who and where come from the session, and over-long texts are cut and marked', () => {
    const r = checkEntry(session, { ...base, client: 'spoofed', server: 'other', arguments: 'x'.repeat(70_000), result: 'y'.repeat(70_000), detail: 'd'.repeat(5000) });
    expect(r).toMatchObject({ client: 'cursor', server: 'fs', argsTruncated: true, resultTruncated: true });
    expect(r.arguments.length).toBe(64 * 1024);
    expect(r.result!.length).toBe(64 * 1024);
    expect(r.detail.length).toBe(4000);
    expect(CallRecordSchema.safeParse(r).success).toBe(true);
  });
});

test('a copy without arguments is stored as saying so, never as the text "null"', () => {
  const { arguments: _, ...later } = base;
  const r = checkEntry(session, later);
  expect(r.arguments).toBe(ARGUMENTS_NOT_RECEIVED);
  expect(JSON.parse(r.arguments)).toMatch(/not received/);
  // arguments that are there, even a JSON null, are kept as they are
  expect(checkEntry(session, { ...base, arguments: null }).arguments).toBe('null');
});
