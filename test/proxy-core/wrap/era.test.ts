import { describe, expect, test } from 'vitest';
import {
  describeRequests,
  inputRequired,
  listingTtl,
  META_VERSION,
  metaVersion,
  requestMeta,
  retryOf,
  stamped,
  unsupportedVersion,
  withResultType,
} from '../../../proxy-core/src/wrap/era.js';

const META = { [META_VERSION]: '2026-07-28', 'io.modelcontextprotocol/clientInfo': { name: 'c', version: '1' }, 'io.modelcontextprotocol/clientCapabilities': {}, progressToken: 7 };

describe('the 2026-07-28 wire, read and written', () => {
  test('the version a request names is read from its _meta only', () => {
    expect(metaVersion({ _meta: META })).toBe('2026-07-28');
    expect(metaVersion({ protocolVersion: '2026-07-28' })).toBeUndefined();
    expect(metaVersion(undefined)).toBeUndefined();
  });

  test('an unsupported version is answered -32022 with what is supported and what was asked (cut)', () => {
    const e = unsupportedVersion(3, 'x'.repeat(500));
    expect(e.error?.code).toBe(-32022);
    expect((e.error?.data as { supported: string[]; requested: string }).supported).toEqual(['2026-07-28']);
    expect((e.error?.data as { requested: string }).requested).toHaveLength(100);
  });

  test("the wrapper's own request carries the client's three keys, none of its other _meta, beside its own", () => {
    const meta = requestMeta({ _meta: META })!;
    expect(meta).toEqual({ [META_VERSION]: '2026-07-28', 'io.modelcontextprotocol/clientInfo': { name: 'c', version: '1' }, 'io.modelcontextprotocol/clientCapabilities': {} });
    const m = stamped({ jsonrpc: '2.0', id: 'own', method: 'tasks/get', params: { taskId: 't', _meta: { mine: 1 } } }, meta) as { params: { taskId: string; _meta: Record<string, unknown> } };
    expect(m.params.taskId).toBe('t');
    expect(m.params._meta).toMatchObject({ mine: 1, [META_VERSION]: '2026-07-28' });
    // a notification is not a request: left as it is
    const note = { jsonrpc: '2.0', method: 'notifications/cancelled', params: {} };
    expect(stamped(note, meta)).toBe(note);
  });

  test("Airlock's own result says resultType complete; one that says already is left alone; an error has none", () => {
    expect(withResultType({ jsonrpc: '2.0', id: 1, result: { content: [] } }).result).toEqual({ resultType: 'complete', content: [] });
    const task = { jsonrpc: '2.0', id: 1, result: { resultType: 'task', taskId: 't' } };
    expect(withResultType(task)).toBe(task);
    const err = { jsonrpc: '2.0', id: 1, error: { code: 1, message: 'x' } };
    expect(withResultType(err)).toBe(err);
  });

  test('a listing ttl is bounded, and only a listing has one', () => {
    expect(listingTtl({ tools: [], ttlMs: 5000 })).toBe(5000);
    expect(listingTtl({ tools: [], ttlMs: 0 })).toBe(100);
    expect(listingTtl({ tools: [], ttlMs: 1e12 })).toBe(24 * 3600_000);
    expect(listingTtl({ tools: [], ttlMs: -1 })).toBeUndefined();
    expect(listingTtl({ ttlMs: 5000 })).toBeUndefined();
    expect(listingTtl({ tools: [], ttlMs: '5000' })).toBeUndefined();
  });

  test('an input_required result gives its state and what it asks, a retry what it answers', () => {
    const asked = inputRequired({
      resultType: 'input_required',
      requestState: 'opaque==',
      inputRequests: { confirm: { method: 'elicitation/create', params: { message: 'Sure?' } }, llm: { method: 'sampling/createMessage', params: {} } },
    })!;
    expect(asked.requestState).toBe('opaque==');
    expect(asked.requests.map((r) => r.method)).toEqual(['elicitation/create', 'sampling/createMessage']);
    expect(describeRequests(asked)).toBe('the server asked for input: confirm (elicitation/create: "Sure?"), llm (sampling/createMessage)');
    expect(inputRequired({ resultType: 'complete', content: [] })).toBeUndefined();
    expect(inputRequired({ content: [] })).toBeUndefined();
    expect(retryOf({ name: 't', arguments: {} })).toBeUndefined();
    expect(retryOf({ name: 't', requestState: 's', inputResponses: { confirm: { action: 'decline' }, llm: { role: 'assistant' } } })).toEqual({
      requestState: 's',
      answered: ['confirm', 'llm'],
      shown: ['"confirm" (decline)', '"llm"'],
    });
  });
});
