/** Why E-Stop is on: from the stream as it happens, or from the journal's last estop-on when it was on at load. */
import { describe, expect, test } from 'vitest';
import type { BrokerEvent, BrokerStatus } from '@airlock/proxy-core/protocol/api';
import { applyEvent, emptySnapshot, findEstopCause, reconcile, withEstopCause } from '../../renderer/src/lib/live.js';

let seq = 0;
const ev = (type: string, detail: unknown = {}): BrokerEvent => ({ seq: ++seq, at: seq, type, server: null, tool: null, detail });
const status = (estop: boolean): BrokerStatus => ({ estop, pending: 0, sessions: [], dataDir: '/d', pid: 1, ticketTimeoutSeconds: 120 });

describe('the cause of an E-Stop', () => {
  test('from the stream: the tripwire says why; a person’s is the user’s; release forgets it', () => {
    let s = applyEvent(emptySnapshot(), ev('estop-on', { by: 'tripwire', reason: '31 changing calls in 10 s' }));
    expect(s).toMatchObject({ estop: true, estopCause: { by: 'tripwire', reason: '31 changing calls in 10 s' } });
    s = applyEvent(s, ev('estop-off'));
    expect(s).toMatchObject({ estop: false, estopCause: null });
    // an older broker's estop-on without detail: a person's
    s = applyEvent(s, ev('estop-on', null));
    expect(s.estopCause).toEqual({ by: 'user' });
  });

  test('at load: status says only that it is on; the newest estop event of a page says why', () => {
    const loaded = reconcile(status(true), [], [], 50);
    expect(loaded.estopCause).toBeNull();
    const newestFirst = [ev('call'), ev('estop-on', { by: 'tripwire', reason: 'too fast' }), ev('estop-off'), ev('estop-on', { by: 'user' })].reverse();
    // reversed: the first element is the newest; here the newest estop event is the user's estop-on
    expect(findEstopCause(newestFirst)).toEqual({ by: 'user' });
    expect(findEstopCause([ev('call'), ev('estop-on', { by: 'tripwire', reason: 'too fast' })])).toEqual({ by: 'tripwire', reason: 'too fast' });
    expect(findEstopCause([ev('estop-off'), ev('estop-on', { by: 'tripwire' })])).toBeNull();
    expect(findEstopCause([ev('call')])).toBeUndefined();
    expect(withEstopCause(loaded, { by: 'tripwire', reason: 'too fast' }).estopCause).toEqual({ by: 'tripwire', reason: 'too fast' });
  });

  test('a cause looked up late never overrides one the stream gave meanwhile, nor an E-Stop released', () => {
    const fresh = applyEvent(reconcile(status(true), [], [], seq), ev('estop-on', { by: 'user' }));
    expect(withEstopCause(fresh, { by: 'tripwire', reason: 'old' }).estopCause).toEqual({ by: 'user' });
    const off = applyEvent(fresh, ev('estop-off'));
    expect(withEstopCause(off, { by: 'tripwire', reason: 'old' }).estopCause).toBeNull();
  });
});
