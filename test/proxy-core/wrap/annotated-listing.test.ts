/**
 * A tools/list answer annotated and written out as one line of bytes: the same bytes JSON.stringify writes of
 * the annotated answer, whatever the entries hold (text of any script, entries dropped), and a page listed again
 * with one entry changed reuses the others' bytes and is still exactly that.
 */
import { describe, expect, test } from 'vitest';
import { classifyTool, type Verdict } from '../../../proxy-core/src/classify/classify.js';
import { annotateToolsResult } from '../../../proxy-core/src/wrap/annotate.js';
import { AnnotatedListing, type AnnotateInputs } from '../../../proxy-core/src/wrap/annotated-listing.js';

const opts = { trustReadOnlyHints: false };
const inputs = (tag: unknown): AnnotateInputs => ({
  inputs: [tag],
  verdictOf: (_name, entry) => classifyTool(entry, opts),
  runsWithoutAsking: () => false,
  log: () => {},
});

/** What the client must get: the answer with every entry annotated, as JSON.stringify writes it. */
function expected(message: Record<string, unknown>, result: Record<string, unknown>): string {
  const annotated = annotateToolsResult(result, (_n, e) => classifyTool(e, opts) as Verdict, () => false, () => {});
  return `${JSON.stringify({ ...message, result: annotated.result })}\n`;
}

const tools = (word: string) => [
  { name: 'lire', description: `Lit un fichier, déjà ${word}.`, inputSchema: { type: 'object' }, annotations: { readOnlyHint: true } },
  { name: 'emoji', description: '📁 files, 𝒳 math, 中文描述', inputSchema: { type: 'object', properties: { p: { type: 'string', description: 'ü' } } } },
  { description: 'no name: dropped' },
  { name: 'plain', inputSchema: { type: 'object' }, annotations: { readOnlyHint: false, destructiveHint: false }, _meta: { k: 'v' } },
];

describe('the annotated line', () => {
  test('is the bytes JSON.stringify writes, in any script, with unnamed entries dropped', () => {
    const listing = new AnnotatedListing();
    const result = { tools: tools('lu') };
    const message = { jsonrpc: '2.0', id: 7, result };
    const got = listing.answer(message, result, result.tools, () => result.tools.map((t) => JSON.stringify(t)), inputs(1));
    expect(got.line.toString('utf8')).toBe(expected(message, result));
    expect([...got.advertised.keys()]).toEqual(['lire', 'emoji', 'plain']);
  });

  test('a page listed again with one entry changed reuses the rest and is still exact', () => {
    const listing = new AnnotatedListing();
    const a = { tools: tools('lu') };
    listing.answer({ jsonrpc: '2.0', id: 1, result: a }, a, a.tools, () => a.tools.map((t) => JSON.stringify(t)), inputs(1));
    const b = { tools: tools('relu — ünïcödé') };
    const message = { jsonrpc: '2.0', id: 2, result: b };
    const got = listing.answer(message, b, b.tools, () => b.tools.map((t) => JSON.stringify(t)), inputs(1));
    expect(got.line.toString('utf8')).toBe(expected(message, b));
    // and once more, unchanged: every entry from the bytes kept
    const again = listing.answer({ ...message, id: 3 }, b, b.tools, () => b.tools.map((t) => JSON.stringify(t)), inputs(1));
    expect(again.line.toString('utf8')).toBe(expected({ ...message, id: 3 }, b));
  });

  test('a page bigger than its first guess grows the line and keeps it exact', () => {
    const listing = new AnnotatedListing();
    const big = { tools: Array.from({ length: 50 }, (_, i) => ({ name: `t${i}`, description: 'é'.repeat(2000), annotations: { readOnlyHint: i % 2 === 0 } })) };
    const message = { jsonrpc: '2.0', id: 'x', result: big };
    // two bytes a character: the line outgrows its estimate, counted in characters
    const got = listing.answer(message, big, big.tools, () => big.tools.map((t) => JSON.stringify(t)), inputs(2));
    expect(got.line.toString('utf8')).toBe(expected(message, big));
  });
});
