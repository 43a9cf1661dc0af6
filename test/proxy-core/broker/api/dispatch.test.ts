// The dispatch chain's count of requests under way (what the journal's filing waits for): a handler's pending
// answer counts until it settles, whether it resolves, rejects or throws at once; a method that waits on a
// person or the OS by design does not count.
import { describe, expect, test } from 'vitest';
import { type Call, compose, counted } from '../../../../proxy-core/src/broker/api/dispatch.js';
import { QUICK_MS } from '../../../../proxy-core/src/protocol/method.js';

/** A request of a method declared with this wait. */
const call = (wait: unknown = 10_000) => ({ method: 'x', params: {}, caller: 'user', context: {}, bound: { decl: { wait } } }) as unknown as Call;

describe('counted', () => {
  test('a request counts from its start until its answer settles, however it ends', async () => {
    const inFlight = { n: 0 };
    let resolve!: (v: unknown) => void;
    let reject!: (e: Error) => void;
    const pending = compose([counted(inFlight), () => new Promise((r) => (resolve = r))])(call()) as Promise<unknown>;
    const failing = compose([counted(inFlight), () => new Promise((_r, j) => (reject = j))])(call()) as Promise<unknown>;
    expect(inFlight.n).toBe(2);
    // answered at once, or thrown at once: never counted after
    expect(compose([counted(inFlight), () => 42])(call())).toBe(42);
    expect(() =>
      compose([
        counted(inFlight),
        () => {
          throw new Error('refused');
        },
      ])(call()),
    ).toThrow(/refused/);
    expect(inFlight.n).toBe(2);
    resolve('ok');
    await expect(pending).resolves.toBe('ok');
    expect(inFlight.n).toBe(1);
    reject(new Error('failed'));
    await expect(failing).rejects.toThrow(/failed/);
    expect(inFlight.n).toBe(0);
  });

  test('a request that waits on a person (a ticket) or past QUICK_MS is not counted while it waits', () => {
    const inFlight = { n: 0 };
    void compose([counted(inFlight), () => new Promise(() => {})])(call({ ticket: (ms: number) => ms + 5000 }));
    void compose([counted(inFlight), () => new Promise(() => {})])(call(QUICK_MS + 1));
    void compose([counted(inFlight), () => new Promise(() => {})])(call((p: unknown) => (p ? 1 : 2)));
    expect(inFlight.n).toBe(0);
    void compose([counted(inFlight), () => new Promise(() => {})])(call(QUICK_MS));
    expect(inFlight.n).toBe(1);
  });
});
