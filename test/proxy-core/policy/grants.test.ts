// Grants in the policy stage: a time-boxed allow decides in the wrapper until the millisecond it ends, a
// counted one always goes through the broker (which spends its calls), and the words a call is journaled with.
import { describe, expect, test } from 'vitest';
import { decide } from '../../../proxy-core/src/policy/decide.js';
import { durationWords, grantFields, grantKind, grantLeft, grantReason } from '../../../proxy-core/src/policy/grants.js';
import { policySnapshot, ruleFor } from '../../helpers/policy.js';

const call = { server: 'fs', client: 'cursor', tool: 'write', toolClass: 'mutating' as const, args: { path: '/notes/a' } };
const T0 = 1_700_000_000_000;

describe('decide with grants', () => {
  const timed = ruleFor('allow', 'write', { id: 'r1', createdAt: T0, expiresAt: T0 + 15 * 60_000 });
  test('a time-boxed grant allows in the same call, up to its end and not at it', () => {
    const before = decide(call, policySnapshot({ rules: [timed] }), undefined, T0 + 3 * 60_000);
    expect(before).toMatchObject({ action: 'allow', decidedBy: 'rule', ruleId: 'r1' });
    expect(before.reason).toBe('allowed by your 15-minute grant r1, 12 minutes left');
    expect(decide(call, policySnapshot({ rules: [timed] }), undefined, T0 + 15 * 60_000 - 1).action).toBe('allow');
    expect(decide(call, policySnapshot({ rules: [timed] }), undefined, T0 + 15 * 60_000)).toMatchObject({ action: 'ask', decidedBy: 'class' });
  });

  test('an end that is not a number never allows (a malformed push)', () => {
    const bad = { ...timed, expiresAt: 'never' as unknown as number };
    expect(decide(call, policySnapshot({ rules: [bad] }), undefined, T0).action).toBe('ask');
  });

  test('a counted grant asks the broker to spend a call, naming the grant; none left: it does not apply', () => {
    const counted = ruleFor('allow', 'write', { id: 'r2', calls: 3, callsGranted: 10 });
    expect(decide(call, policySnapshot({ rules: [counted] }), undefined, T0)).toMatchObject({ action: 'ask', decidedBy: 'rule', grant: 'r2' });
    expect(decide(call, policySnapshot({ rules: [{ ...counted, calls: 0 }] }), undefined, T0)).toMatchObject({ action: 'ask', decidedBy: 'class' });
    expect(decide(call, policySnapshot({ rules: [{ ...counted, calls: '9' as unknown as number }] }), undefined, T0).grant).toBeUndefined();
  });

  test('an allow that spends nothing is taken over a counted grant; a deny still wins over both', () => {
    const counted = ruleFor('allow', 'write', { id: 'r2', calls: 3 });
    const always = ruleFor('allow', '*', { id: 'r3' });
    expect(decide(call, policySnapshot({ rules: [counted, always] }), undefined, T0)).toMatchObject({ action: 'allow', ruleId: 'r3' });
    expect(decide(call, policySnapshot({ rules: [counted, ruleFor('deny', 'write')] }), undefined, T0).action).toBe('deny');
  });
});

describe('grant words and ends', () => {
  test.each([
    [15 * 60_000, '15 minutes'],
    [65 * 60_000, '1 hour 5 minutes'],
    [40_000, '40 seconds'],
    [90_000, '1 minute 30 seconds'],
    [12 * 60_000 + 40_000, '13 minutes'],
  ])('%d ms is "%s"', (ms, words) => expect(durationWords(ms)).toBe(words));

  test('what is left and what kind', () => {
    expect(grantLeft({ calls: 2, callsGranted: 10 }, 0)).toBe('2 of 10 calls left');
    expect(grantKind({ calls: 2, callsGranted: 10, createdAt: 0 })).toBe('grant of 10 calls');
    expect(grantKind({ expiresAt: 3600_000, createdAt: 0 })).toBe('1-hour grant');
    expect(grantReason(ruleFor('allow', 'w', { id: 'r9', calls: 1 }), 0)).toBe('allowed by your grant of 1 call r9, 1 call left');
  });

  test('a grant ends in the future and within a week', () => {
    expect(grantFields({ seconds: 900 }, T0)).toEqual({ expiresAt: T0 + 900_000 });
    expect(grantFields({ calls: 10, until: T0 + 1000 }, T0)).toEqual({ expiresAt: T0 + 1000, calls: 10, callsGranted: 10 });
    expect(grantFields({ until: T0 }, T0)).toHaveProperty('error');
    expect(grantFields({ until: T0 + 8 * 86_400_000 }, T0)).toHaveProperty('error');
  });
});
