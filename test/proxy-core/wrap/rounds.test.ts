import { describe, expect, test } from 'vitest';
import { Call } from '../../../proxy-core/src/wrap/call.js';
import { Rounds } from '../../../proxy-core/src/wrap/rounds.js';
import { argumentsHash } from '../../../proxy-core/src/jsonrpc/canonical.js';

function call(id: number, args: Record<string, unknown> = { name: 'a' }): Call {
  const c = new Call({ id, key: `n:${id}`, callId: `c-${id}`, tool: 'delete', args, message: { jsonrpc: '2.0', id, method: 'tools/call' }, progressToken: undefined, startedAt: 0, startedMono: 0 });
  c.decidedBy = 'user';
  return c;
}
const asked = (requestState: string | undefined) => ({ requestState, requests: [{ key: 'confirm', method: 'elicitation/create', summary: '' }] });

describe('rounds of a multi round-trip call', () => {
  test('a retry with the same tool, argument hash and state continues the round once', () => {
    const rounds = new Rounds();
    const first = call(1);
    expect(rounds.opened(first, asked('s1'), 0)).toMatch(/^; round 1: /);
    const sha = argumentsHash({ name: 'a' });
    expect(rounds.take('delete', sha, 's1', 10)).toMatchObject({ first, last: first, decidedBy: 'user', n: 1 });
    // taken: a second retry of the same round is a new call
    expect(rounds.take('delete', sha, 's1', 10)).toBeUndefined();
  });

  test('another state, other arguments or another tool continue nothing', () => {
    const rounds = new Rounds();
    rounds.opened(call(1), asked('s1'), 0);
    const sha = argumentsHash({ name: 'a' });
    expect(rounds.take('delete', sha, 's2', 1)).toBeUndefined();
    expect(rounds.take('delete', sha, undefined, 1)).toBeUndefined();
    expect(rounds.take('delete', argumentsHash({ name: 'b' }), 's1', 1)).toBeUndefined();
    expect(rounds.take('other', sha, 's1', 1)).toBeUndefined();
    expect(rounds.take('delete', sha, 's1', 1)).toBeDefined();
  });

  test('a round the server gave no state for takes a retry without one; a later round counts on', () => {
    const rounds = new Rounds();
    const first = call(1);
    rounds.opened(first, asked(undefined), 0);
    const r1 = rounds.take('delete', argumentsHash({ name: 'a' }), undefined, 1)!;
    const retry = call(2);
    retry.round = r1;
    expect(rounds.opened(retry, asked('s2'), 2)).toMatch(/^; round 2: /);
    expect(rounds.take('delete', argumentsHash({ name: 'a' }), 's2', 3)).toMatchObject({ first, last: retry, n: 2 });
  });

  test('a round waited on too long is forgotten, and E-Stop ends every one', () => {
    const rounds = new Rounds();
    rounds.opened(call(1), asked('s'), 0);
    expect(rounds.take('delete', argumentsHash({ name: 'a' }), 's', 31 * 60_000)).toBeUndefined();
    rounds.opened(call(2, { name: 'x' }), asked('s'), 0);
    rounds.opened(call(3, { name: 'y' }), asked('s'), 0);
    expect(rounds.endAll()).toHaveLength(2);
    expect(rounds.size).toBe(0);
  });
});
