import { describe, expect, it } from 'vitest';
import { idKey } from '../../../proxy-core/src/jsonrpc/messages.js';

describe('idKey', () => {
  it('keeps a number and the string of its digits apart', () => {
    expect(idKey(1)).not.toBe(idKey('1'));
    expect(idKey(1)).toBe('n:1');
    expect(idKey('1')).toBe('s:1');
  });

  it('gives each id its own key, whatever came before it (the last numeric id is remembered)', () => {
    const ids = [7, 7, 8, 7, 0, -0, 1.5, 1e21, 2 ** 53, 7, '7', 8];
    const keys = ids.map((id) => idKey(id));
    expect(keys).toEqual(['n:7', 'n:7', 'n:8', 'n:7', 'n:0', 'n:0', 'n:1.5', 'n:1e+21', 'n:9007199254740992', 'n:7', 's:7', 'n:8']);
  });

  it('writes a number id as JSON-RPC carries it, so two ids share a key only when they are the same number', () => {
    for (let i = 0; i < 500; i++) {
      const a = Math.floor(Math.random() * 1e6);
      const b = a + 1 + Math.floor(Math.random() * 10);
      expect(idKey(a)).not.toBe(idKey(b));
      expect(idKey(a)).toBe(`n:${JSON.parse(JSON.stringify(a))}`);
    }
  });

  it('keeps the ids JSON cannot hold (1e400 reads as Infinity) apart from each other and from every finite id', () => {
    const keys = [Infinity, -Infinity, NaN, 0].map((id) => idKey(id));
    expect(new Set(keys).size).toBe(4);
    expect(idKey(JSON.parse('1e400'))).toBe('n:Infinity');
  });
});
