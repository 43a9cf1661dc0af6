/**
 * The verdict a call is decided on is worked out again whenever what it is made of changes: a read-only claim
 * withdrawn in this wrapper (before the broker has heard of it), a policy pushed with other withdrawn claims or
 * other trust. A call made after the change is never decided on the verdict from before it.
 */
import { describe, expect, test } from 'vitest';
import { Harness, settle, TOOLS } from '../../helpers/relay-harness.js';

const asks = (h: Harness, id: string) => h.link.asked.some((a) => (a as { tool?: string }).tool === 'echo') && h.answers(id).length === 0;
const ran = (h: Harness, id: string) => h.forwardedCalls().some((m) => m.id === id);

describe('the verdict a call is decided on', () => {
  test('a claim withdrawn in this wrapper holds for the very next call, with no policy push in between', async () => {
    const h = await new Harness({ policy: { trustReadOnlyHints: true } }).start();
    h.call('a', 'echo');
    await settle();
    expect(ran(h, 'a')).toBe(true);
    // the server reports a change while a read-only call runs: the claim is withdrawn here at once
    h.server({ jsonrpc: '2.0', method: 'notifications/resources/list_changed' });
    h.server({ jsonrpc: '2.0', id: 'a', result: { content: [] } });
    h.call('b', 'echo');
    await settle();
    expect(ran(h, 'b')).toBe(false);
    expect(asks(h, 'b')).toBe(true);
  });

  test('a push that withdraws a claim, then one that gives it back, and one that stops trusting: each is the next call\'s verdict', async () => {
    const h = await new Harness({ policy: { trustReadOnlyHints: true } }).start();
    h.call('1', 'echo');
    await settle();
    expect(ran(h, '1')).toBe(true);
    h.link.push({ withdrawn: { echo: 'it wrote a file' } });
    h.call('2', 'echo');
    await settle();
    expect(ran(h, '2')).toBe(false);
    h.link.push({ withdrawn: {} });
    h.call('3', 'echo');
    await settle();
    expect(ran(h, '3')).toBe(true);
    h.link.push({ trustReadOnlyHints: false });
    h.call('4', 'echo');
    await settle();
    expect(ran(h, '4')).toBe(false);
  });
});

describe('the catalog the broker is told', () => {
  test("goes once the client's listing answer has been written out, not while it is being written", async () => {
    let written: (() => void) | undefined;
    const h = await new Harness({ whenClientWritten: (fn) => void (written = fn) }).start();
    // the start-up listing's report waited for the writer too: let it go
    written?.();
    await settle();
    const before = h.link.catalogs.length;
    written = undefined;
    h.client({ jsonrpc: '2.0', id: 'l', method: 'tools/list', params: {} });
    // echo declared destructive to the client: the strictest declaration applies, a catalog the broker has not been told
    h.server({ jsonrpc: '2.0', id: 'l', result: { tools: [{ ...TOOLS[0], annotations: { destructiveHint: true } }, ...TOOLS.slice(1)] } });
    await settle();
    expect(h.answers('l')).toHaveLength(1);
    expect(written).toBeTypeOf('function');
    // the wrapper relisted (the page differed from its listing): still nothing reported while the answer is out
    expect(h.link.catalogs.length).toBe(before);
    written!();
    await settle();
    expect(h.link.catalogs.length).toBeGreaterThan(before);
  });

  test('goes before a call asks, written out or not', async () => {
    let written: (() => void) | undefined;
    const h = await new Harness({ whenClientWritten: (fn) => void (written = fn) }).start();
    const before = h.link.catalogs.length;
    h.call('c', 'write_note');
    await settle();
    expect(written).toBeTypeOf('function');
    expect(h.link.asked.map((a) => a.tool)).toEqual(['write_note']);
    expect(h.link.catalogs.length).toBeGreaterThan(before);
  });

  /** A started wrapper of `n` tools whose start-up report waits until `release()` (the client's answer "written"). */
  async function bigCatalog(n: number, policy: Record<string, unknown> = { rules: [] }) {
    const tools = Array.from({ length: n }, (_, i) => ({ name: `t${i}`, inputSchema: { type: 'object' } }));
    let written: (() => void) | undefined;
    const h = await new Harness({ policy, tools, whenClientWritten: (fn) => void (written = fn) }).start();
    return { h, tools, release: () => written!() };
  }
  const turns = async (n: number) => {
    for (let i = 0; i < n; i++) await new Promise<void>((r) => setImmediate(r));
  };

  test('a call allowed outright does not wait for it; a big one is built a slice at a time, calls decided in between', async () => {
    const { h, tools, release } = await bigCatalog(2000, { rules: [{ id: 'r1', action: 'allow', server: '*', tool: '*', createdAt: 0 }] });
    h.call(1, 't7');
    await settle();
    expect(h.forwardedCalls().map((m) => m.id)).toEqual([1]);
    expect(h.link.catalogs).toHaveLength(0);
    release();
    // one slice, then the event loop's turn: a call that came in is decided before the rest is built
    await turns(1);
    h.call(2, 't1999');
    expect(h.forwardedCalls().map((m) => m.id)).toEqual([1, 2]);
    expect(h.link.catalogs).toHaveLength(0);
    for (let i = 0; i < 50 && h.link.catalogs.length === 0; i++) await turns(1);
    expect(h.link.catalogs).toHaveLength(1);
    expect((h.link.catalogs[0]!.verdicts as { name: string }[]).map((v) => v.name)).toEqual(tools.map((t) => t.name));
  });

  test('a server that relists faster than it is built does not keep it from the broker past a second', async () => {
    const { h, release } = await bigCatalog(10_000);
    release();
    await turns(1);
    expect(h.link.catalogs).toHaveLength(0);
    // a relisting within the second: the build starts over, a slice at a time
    h.server({ jsonrpc: '2.0', method: 'notifications/tools/list_changed' });
    await turns(2);
    expect(h.link.catalogs).toHaveLength(0);
    // one past it: built whole, at once
    h.clock.advance(1000);
    h.server({ jsonrpc: '2.0', method: 'notifications/tools/list_changed' });
    await turns(2);
    expect(h.link.catalogs).toHaveLength(1);
    expect(h.link.catalogs[0]!.verdicts).toHaveLength(10_000);
  });

  test('a call that asks while it is being built finishes it first: the broker has the whole listing before the ticket', async () => {
    const { h, release } = await bigCatalog(2000);
    release();
    // a slice built, the rest not yet
    await turns(1);
    expect(h.link.catalogs).toHaveLength(0);
    h.call(1, 't3');
    await settle();
    expect(h.link.asked.map((a) => a.tool)).toEqual(['t3']);
    expect(h.link.catalogs).toHaveLength(1);
    expect(h.link.catalogs[0]!.verdicts).toHaveLength(2000);
  });
});
