/**
 * The verdict a call is decided on is worked out again whenever what it is made of changes: a read-only claim
 * withdrawn in this wrapper (before the broker has heard of it), a policy pushed with other withdrawn claims or
 * other trust. A call made after the change is never decided on the verdict from before it.
 */
import { describe, expect, test } from 'vitest';
import { Harness, settle } from '../../helpers/relay-harness.js';

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
