// The grant chooser's pure part: scopes narrowest first, the next time of day, the approve params a choice
// makes, what a rule says is left of it, and the keys that answer a card.
import { describe, expect, test } from 'vitest';
import { alike, approveParams, cardKey, grantStatus, LENGTHS, nextClockTime, scopeOptions } from '../../../renderer/src/lib/grants.js';

const scopes = [{ label: 'writes under /notes', args: [{ arg: 'path', kind: 'path' as const, glob: '/notes/**' }] }];
const ticket = { id: 't1', tool: 'write', scopes, undoable: null };

describe('grants on a card', () => {
  test('scopes narrowest first: the broker’s, then the tool; lengths start at a number of calls', () => {
    expect(scopeOptions(ticket).map((s) => s.scope.kind)).toEqual(['scope', 'tool']);
    expect(LENGTHS[0]).toEqual({ kind: 'calls', calls: 10 });
  });

  test('until 18:00 is today before it, tomorrow after it', () => {
    const morning = new Date(2026, 11, 1, 9, 30).getTime();
    expect(nextClockTime('18:00', morning)).toBe(new Date(2026, 11, 1, 18, 0).getTime());
    const night = new Date(2026, 11, 1, 19, 0).getTime();
    expect(nextClockTime('18:00', night)).toBe(new Date(2026, 11, 2, 18, 0).getTime());
    expect(nextClockTime('25:00', night)).toBeNull();
  });

  test('a choice becomes one approve', () => {
    expect(approveParams(ticket, { kind: 'scope', index: 0 }, { kind: 'calls', calls: 10 }, 0)).toEqual({ params: { id: 't1', remember: 'always', args: scopes[0]!.args, grant: { calls: 10 } } });
    expect(approveParams(ticket, { kind: 'tool' }, { kind: 'minutes', minutes: 15 }, 0)).toEqual({ params: { id: 't1', remember: 'always', grant: { seconds: 900 } } });
    expect(approveParams(ticket, { kind: 'tool' }, { kind: 'always' }, 0)).toEqual({ params: { id: 't1', remember: 'always' } });
    expect(approveParams(ticket, { kind: 'tool' }, { kind: 'calls', calls: 0 }, 0)).toHaveProperty('error');
    expect(approveParams(ticket, { kind: 'scope', index: 4 }, { kind: 'always' }, 0)).toHaveProperty('error');
  });

  test('what is left of a grant', () => {
    expect(grantStatus({ expiresAt: 12 * 60_000 + 5000 }, 0)).toBe('12 minutes left');
    expect(grantStatus({ calls: 3, callsGranted: 10 }, 0)).toBe('3 of 10 calls left');
    expect(grantStatus({ expiresAt: 10 }, 20)).toBe('ended');
    expect(grantStatus({}, 0)).toBeNull();
  });

  test('keys: 1, 2, 3 and Esc; nothing typed into a field nor with a modifier', () => {
    const k = (key: string, mods = {}) => ({ key, altKey: false, ctrlKey: false, metaKey: false, ...mods });
    expect(cardKey(k('1'), false)).toBe('once');
    expect(cardKey(k('2'), false)).toBe('session');
    expect(cardKey(k('3'), false)).toBe('grant');
    expect(cardKey(k('Escape'), true)).toBe('deny');
    expect(cardKey(k('1'), true)).toBeNull();
    expect(cardKey(k('1', { ctrlKey: true }), false)).toBeNull();
  });

  test('alike: same server, tool and client', () => {
    expect(alike({ server: 's', tool: 't', client: 'c' }, { server: 's', tool: 't', client: 'c' })).toBe(true);
    expect(alike({ server: 's', tool: 't', client: 'c' }, { server: 's', tool: 'u', client: 'c' })).toBe(false);
  });
});
