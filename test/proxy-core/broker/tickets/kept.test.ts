import { describe, expect, test } from 'vitest';
import { KeptDecisions } from '../../../../proxy-core/src/broker/tickets/kept.js';
import type { AskAnswer, Ticket } from '../../../../proxy-core/src/protocol/api.js';
import { FakeClock } from '../../../helpers/fake-clock.js';

const SHA = 'a'.repeat(64);

function ticket(over: Partial<Ticket> = {}): Ticket {
  return {
    id: 't1',
    sessionId: 's1',
    callId: 'c1',
    client: 'cli',
    server: 'fs',
    tool: 'write',
    arguments: {},
    argsTruncated: false,
    argsBytes: 2,
    argsSha256: SHA,
    class: 'write',
    reasons: [],
    createdAt: 0,
    expiresAt: 1000,
    ...over,
  } as Ticket;
}

const approved: AskAnswer = { decision: 'allow', decidedBy: 'user', ticketId: 't1', reason: 'approved' };
const same = { client: 'cli', server: 'fs', tool: 'write', argsSha256: SHA };

describe('decisions on tickets kept past their session', () => {
  test('the same call takes a decision once', () => {
    const k = new KeptDecisions(new FakeClock());
    k.add(ticket(), approved, 5000);
    expect(k.take(same)).toEqual(approved);
    expect(k.take(same)).toBeUndefined();
  });

  test('another client, server, tool or arguments take nothing', () => {
    const k = new KeptDecisions(new FakeClock());
    k.add(ticket(), approved, 5000);
    for (const other of [{ client: 'x' }, { server: 'x' }, { tool: 'x' }, { argsSha256: 'b'.repeat(64) }]) expect(k.take({ ...same, ...other })).toBeUndefined();
    expect(k.size).toBe(1);
  });

  test('a decision lapses when not picked up in time', () => {
    const clock = new FakeClock();
    const k = new KeptDecisions(clock);
    k.add(ticket(), approved, 5000);
    clock.advance(4999);
    expect(k.size).toBe(1);
    clock.advance(1);
    expect(k.take(same)).toBeUndefined();
  });

  test("only a person's decision is kept: a timeout or an E-Stop leaves nothing to pick up", () => {
    const k = new KeptDecisions(new FakeClock());
    k.add(ticket(), { decision: 'deny', decidedBy: 'timeout', ticketId: 't1', reason: 'nobody answered' }, 5000);
    k.add(ticket(), { decision: 'deny', decidedBy: 'estop', ticketId: 't1', reason: 'E-Stop' }, 5000);
    expect(k.size).toBe(0);
  });
});
