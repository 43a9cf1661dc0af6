/** What the wrapper accepts from a client, as a table; and the catalog's ratchet on changing declarations. */
import { describe, expect, test } from 'vitest';
import { checkClientMessage, nestedDeeperThan, parseLine } from '../../../proxy-core/src/jsonrpc/inbound.js';
import { ToolListing } from '../../../proxy-core/src/wrap/tool-listing.js';

const ctx = {
  inFlight: (id: string | number) => id === 'busy',
  reserved: (id: string | number) => typeof id === 'string' && id.startsWith('airlock-internal:'),
};
const check = (text: string) => checkClientMessage(parseLine(Buffer.from(text)), ctx);

describe('client messages', () => {
  test.each([
    ['a plain call', '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}'],
    ['a string id', '{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"x"}}'],
    ['a notification', '{"jsonrpc":"2.0","method":"notifications/initialized"}'],
    ['a response to the server', '{"jsonrpc":"2.0","id":"srv-1","result":{}}'],
    ['an error response with id null', '{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}}'],
    ['a leading BOM', '\uFEFF{"jsonrpc":"2.0","id":2,"method":"ping"}'],
  ])('accepts %s', (_what, text) => {
    expect(check(text).ok).toBe(true);
  });

  test.each([
    ['id null', '{"id":null,"method":"tools/call"}', null],
    ['id true', '{"id":true,"method":"tools/call"}', null],
    ['id an object', '{"id":{},"method":"tools/call"}', null],
    ['id an array', '{"id":[],"method":"tools/call"}', null],
    ['id overflowing', '{"id":-1e999,"method":"tools/call"}', null],
    ['no id on tools/call', '{"method":"tools/call","params":{"name":"x"}}', null],
    ['a NUL in the method', '{"id":1,"method":"tools/call\\u0000"}', null],
    ['a DEL in the method', '{"id":1,"method":"ping\\u007f"}', null],
    ['a C1 control in the method', '{"id":1,"method":"ping\\u0085"}', null],
    ['a line separator in the method', '{"id":1,"method":"ping\\u2028"}', null],
    ['upper case', '{"id":1,"method":"TOOLS/CALL"}', null],
    ['a method that is not a string', '{"id":3,"method":7}', 3],
    ['an id in flight', '{"id":"busy","method":"ping"}', null],
    ['a reserved id', '{"id":"airlock-internal:x:1","method":"tools/list"}', null],
    ['neither method nor result', '{"id":4}', 4],
    ['not an object', '42', null],
  ])('refuses %s, answering with id %s', (_what, text, replyId) => {
    const v = check(text);
    expect(v.ok).toBe(false);
    if (!v.ok) expect(v.reply).toMatchObject({ id: replyId, error: { code: -32600 } });
  });

  test('a response with an unusable id is dropped without an answer', () => {
    const v = check('{"id":{"x":1},"result":{}}');
    expect(v).toMatchObject({ ok: false, reply: null });
  });

  test('a line that is not JSON parses to undefined', () => {
    expect(parseLine(Buffer.from('{"a":'))).toBeUndefined();
  });
});

describe('catalog: every declaration seen counts, the strictest wins', () => {
  const tool = (annotations: unknown) => ({ name: 'echo', inputSchema: { type: 'object' }, annotations });

  function listed(tools: unknown[]): ToolListing {
    let pending: ((m: unknown) => void) | undefined;
    const catalog = new ToolListing(
      (m) => {
        const id = (m as { id: string }).id;
        pending = () => catalog.takeResponse({ jsonrpc: '2.0', id, result: { tools } });
      },
      () => {},
    );
    catalog.allowListing();
    void catalog.refresh();
    pending!(undefined);
    return catalog;
  }

  test('a client page that differs makes the listing stale and tightens the verdict', async () => {
    const catalog = listed([tool({ readOnlyHint: true })]);
    await new Promise((r) => setImmediate(r));
    expect(catalog.ready).toBe(true);
    expect(catalog.classify(true, new Map()).verdicts.get('echo')!.class).toBe('read-only-trusted');
    expect(catalog.observe([tool({ destructiveHint: true })])).toBe(true);
    expect(catalog.ready).toBe(false);
    const v = catalog.classify(true, new Map()).verdicts.get('echo')!;
    expect(v.class).toBe('destructive');
    expect(v.reasons[0]).toMatch(/differently during this session/);
  });

  test('the same page again changes nothing', async () => {
    const catalog = listed([tool({ readOnlyHint: true })]);
    await new Promise((r) => setImmediate(r));
    expect(catalog.observe([tool({ readOnlyHint: true })])).toBe(false);
    expect(catalog.ready).toBe(true);
  });

  test('a tool declared in too many ways is not believed at all', async () => {
    const catalog = listed([tool({ readOnlyHint: true })]);
    await new Promise((r) => setImmediate(r));
    for (let i = 0; i < 9; i++) catalog.observe([tool({ readOnlyHint: true, title: `t${i}` })]);
    expect(catalog.classify(true, new Map()).verdicts.get('echo')!.class).toBe('unclassifiable');
  });

  test('ids in the reserved namespace are the catalog\'s, whoever sent them', () => {
    const catalog = new ToolListing(() => {}, () => {});
    expect(catalog.reserves('airlock-internal:anything')).toBe(true);
    expect(catalog.reserves('airlock-1')).toBe(false);
    expect(catalog.reserves(5)).toBe(false);
  });
});

describe('nesting', () => {
  const nest = (n: number): unknown => {
    let v: unknown = 1;
    for (let i = 0; i < n; i++) v = i % 2 ? [v] : { k: v };
    return v;
  };
  test.each([
    [0, false],
    [99, false],
    [100, false],
    [101, true],
    [50_000, true],
  ])('%i levels: deeper than 100 is %s, and the check itself never overflows', (levels, deeper) => {
    expect(nestedDeeperThan(nest(levels), 100)).toBe(deeper);
  });

  test('a message nested too deep is refused with its own id', () => {
    const v = checkClientMessage({ jsonrpc: '2.0', id: 4, method: 'tools/call', params: { name: 'x', arguments: nest(200) } }, { inFlight: () => false, reserved: () => false });
    expect(v).toMatchObject({ ok: false, reply: { id: 4, error: { code: -32600 } } });
  });
});
