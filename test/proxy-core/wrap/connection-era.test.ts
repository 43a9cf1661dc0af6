import { describe, expect, test } from 'vitest';
import { ConnectionEra } from '../../../proxy-core/src/wrap/connection-era.js';
import { FakeClock } from '../../helpers/fake-clock.js';

const META = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientInfo': { name: 'c', version: '1' }, 'io.modelcontextprotocol/clientCapabilities': {} };
const req = (method: string, params?: unknown) => ({ jsonrpc: '2.0' as const, id: 1, method, params });

function era() {
  const clock = new FakeClock();
  const seen = { modern: 0, expired: 0 };
  const e = new ConnectionEra({ clock, log: () => {}, modern: () => seen.modern++, expired: () => seen.expired++ });
  return { e, clock, seen };
}

describe("a connection's era", () => {
  test('initialize makes it 2025: _meta is then the client\'s business, nothing is stamped or rewritten', () => {
    const { e, seen } = era();
    expect(e.observe(req('initialize', {}))).toBeUndefined();
    expect(e.era).toBe('2025');
    expect(e.observe(req('tools/list', { _meta: { ...META, 'io.modelcontextprotocol/protocolVersion': 'odd' } }))).toBeUndefined();
    const own = { jsonrpc: '2.0', id: 'x', method: 'tools/list', params: {} };
    expect(e.stamp(own)).toBe(own);
    const result = { jsonrpc: '2.0', id: 1, result: {} };
    expect(e.own(result)).toBe(result);
    expect(seen.modern).toBe(0);
  });

  test('a request naming 2026-07-28 makes it 2026 once; the wrapper\'s requests carry its _meta; results say resultType', () => {
    const { e, seen } = era();
    expect(e.observe(req('server/discover', { _meta: META }))).toBeUndefined();
    expect(e.observe(req('tools/list', { _meta: META }))).toBeUndefined();
    expect(e.era).toBe('2026');
    expect(seen.modern).toBe(1);
    expect((e.stamp({ jsonrpc: '2.0', id: 'x', method: 'tools/list', params: {} }) as { params: { _meta: unknown } }).params._meta).toEqual(META);
    expect(e.own({ jsonrpc: '2.0', id: 1, result: {} }).result).toEqual({ resultType: 'complete' });
  });

  test('a version nobody speaks is refused, and decides nothing', () => {
    const { e } = era();
    expect(e.observe(req('tools/list', { _meta: { ...META, 'io.modelcontextprotocol/protocolVersion': '2030-01-01' } }))?.error?.code).toBe(-32022);
    expect(e.era).toBeUndefined();
  });

  test('a discover probe is a 2026 session only once the server answers it as one', () => {
    const { e, seen } = era();
    e.observe(req('server/discover', { _meta: META }));
    expect(seen.modern).toBe(0);
    e.discovered({ jsonrpc: '2.0', id: 1, result: { resultType: 'complete', supportedVersions: ['2026-07-28'] } });
    expect(seen.modern).toBe(1);
    expect(e.era).toBe('2026');
  });

  test('a discover probe an older server refuses leaves the era undecided, and the fallback initialize makes it 2025', () => {
    const { e, seen } = era();
    e.observe(req('server/discover', { _meta: META }));
    e.discovered({ jsonrpc: '2.0', id: 1, error: { code: -32601, message: 'method not found' } });
    expect(e.era).toBeUndefined();
    e.observe(req('initialize', {}));
    expect(e.era).toBe('2025');
    expect(seen.modern).toBe(0);
  });

  test("the wrapper's listing is taken again when its ttlMs runs out (the last page's ttl counts), not in 2025", () => {
    const { e, clock, seen } = era();
    e.listed({ tools: [], ttlMs: 500 });
    clock.advance(1000);
    expect(seen.expired).toBe(0);
    e.observe(req('tools/list', { _meta: META }));
    e.listed({ tools: [], ttlMs: 500 });
    e.listed({ tools: [], ttlMs: 800 });
    clock.advance(600);
    expect(seen.expired).toBe(0);
    clock.advance(300);
    expect(seen.expired).toBe(1);
    e.listed({ tools: [], ttlMs: 500 });
    e.close();
    clock.advance(1000);
    expect(seen.expired).toBe(1);
  });
});
