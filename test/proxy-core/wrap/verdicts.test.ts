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

  test('goes before a call is decided, written out or not', async () => {
    let written: (() => void) | undefined;
    const h = await new Harness({ whenClientWritten: (fn) => void (written = fn) }).start();
    const before = h.link.catalogs.length;
    h.call('c', 'write_note');
    await settle();
    expect(written).toBeTypeOf('function');
    expect(h.link.catalogs.length).toBeGreaterThan(before);
  });
});
