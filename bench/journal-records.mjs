// The journal records the benchmarks write: varied enough (7 servers, 31 tools, a deny every 13th, a tool
// error every 17th) that filters select something and indexes matter.
export const T0 = 1_700_000_000_000;

/**
 * Call number i, as the wrapper journals it when decided (`final` false) and when done (`final` true), started
 * at t0 + 10 ms × i. (A broker running on the store prunes what is older than its retention: give it a recent t0.)
 */
export function journalRecord(i, final, t0 = T0) {
  return {
    id: `call-${i.toString(36)}-abcdef`,
    sessionId: 's1',
    client: 'cursor',
    server: `srv${i % 7}`,
    tool: `tool_${i % 31}`,
    arguments: JSON.stringify({ path: `/home/me/notes/file-${i}.md`, content: 'x'.repeat(120), n: i }),
    argsTruncated: false,
    argsBytes: 180,
    argsSha256: 'ab'.repeat(32),
    class: 'mutating',
    reasons: ['declares destructiveHint: false'],
    decision: i % 13 === 0 ? 'deny' : 'allow',
    decidedBy: i % 13 === 0 ? 'user' : 'rule',
    detail: 'allowed by rule r1',
    outcome: final ? (i % 17 === 0 ? 'tool-error' : 'ok') : 'pending',
    startedAt: t0 + i * 10,
    decidedAt: t0 + i * 10 + 1,
    ...(final
      ? { result: JSON.stringify({ content: [{ type: 'text', text: `wrote file-${i}.md `.repeat(12) }] }), resultBytes: 300, forwardedAt: t0 + i * 10 + 1, finishedAt: t0 + i * 10 + 4, durationMs: 3.5 }
      : {}),
  };
}

/** Write calls 0..n-1 (done) into a store, 1,000 per transaction. */
export function seedJournal(store, n, t0 = T0) {
  for (let b = 0; b < n / 1000; b++) {
    store.writeJournal(Array.from({ length: 1000 }, (_, k) => journalRecord(b * 1000 + k, true, t0)));
  }
}
