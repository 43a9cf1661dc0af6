/** Why E-Stop is on: from the stream as it happens, or from the broker's status when it was on at load. */
import { describe, expect, test } from 'vitest';
import type { BrokerEvent, BrokerStatus } from '@airlock/proxy-core/protocol/api';
import { applyEvent, emptySnapshot, reconcile } from '../../../renderer/src/lib/live.js';

let seq = 0;
const ev = (type: string, detail: unknown = {}): BrokerEvent => ({ seq: ++seq, at: seq, type, server: null, tool: null, detail });
const status = (estop: boolean, estopCause?: BrokerStatus['estopCause']): BrokerStatus => ({ estop, ...(estopCause !== undefined ? { estopCause } : {}), pending: 0, sessions: [], dataDir: '/d', pid: 1, ticketTimeoutSeconds: 120 });

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

  test('at load: status says who turned it on; an older broker that does not say leaves it unknown', () => {
    expect(reconcile(status(true, { by: 'tripwire', reason: 'too fast', at: 5 }), [], [], 50).estopCause).toEqual({ by: 'tripwire', reason: 'too fast' });
    expect(reconcile(status(true, { by: 'user', at: 5 }), [], [], 50).estopCause).toEqual({ by: 'user' });
    expect(reconcile(status(true, null), [], [], 50).estopCause).toBeNull();
    expect(reconcile(status(true), [], [], 50).estopCause).toBeNull();
    // a stale cause in an E-Stop that is off means nothing
    expect(reconcile(status(false, { by: 'user' }), [], [], 50).estopCause).toBeNull();
  });

  test('events that arrived while it loaded win over the status', () => {
    const s = reconcile(status(true, { by: 'user' }), [], [ev('estop-off'), ev('estop-on', { by: 'tripwire', reason: 'new' })], 0);
    expect(s).toMatchObject({ estop: true, estopCause: { by: 'tripwire', reason: 'new' } });
  });
});
