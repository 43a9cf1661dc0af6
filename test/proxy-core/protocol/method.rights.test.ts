/**
 * Every method says what its call may change, beside its name and schemas: a method cannot be added without
 * saying whether it loosens. The direction of the two-way ones (E-Stop, rules, trust, settings) follows the call.
 */
import { describe, expect, test } from 'vitest';
import { type AnyMethod, methods, rightsOf } from '../../../proxy-core/src/protocol/api.js';
import type { RightsLookup } from '../../../proxy-core/src/protocol/presence.js';
import { settingTightens } from '../../../proxy-core/src/protocol/settings.js';

const declared = Object.values(methods as Record<string, AnyMethod>);
const state = (action: 'allow' | 'deny' | 'ask' | null = null, tightens = false): RightsLookup => ({ ruleAction: () => action, settingTightens: () => tightens, passkeys: () => 1 });
const rights = (name: string, params: unknown, s = state()) => rightsOf((methods as Record<string, AnyMethod>)[name]!, params, s);

describe('rights', () => {
  test("every method declares them; a wrapper's methods are reports, and no front end's method is", () => {
    for (const d of declared) {
      expect(d.rights, d.name).toBeDefined();
      if (d.role === 'wrapper') expect(d.rights, d.name).toBe('report');
      else expect(typeof d.rights === 'function' || ['read', 'tighten', 'loosen'].includes(d.rights as string), d.name).toBe(true);
    }
  });

  test('what loosens and what tightens', () => {
    expect(rights('approve', { id: 't' })).toBe('loosen');
    expect(rights('deny', { id: 't' })).toBe('tighten');
    expect(rights('estop', { on: true })).toBe('tighten');
    expect(rights('estop', { on: false })).toBe('loosen');
    expect(rights('rules.add', { action: 'allow' })).toBe('loosen');
    expect(rights('rules.add', { action: 'deny' })).toBe('tighten');
    expect(rights('rules.add', { action: 'ask' })).toBe('tighten');
    expect(rights('rules.remove', { id: 'r' }, state('allow'))).toBe('tighten');
    expect(rights('rules.remove', { id: 'r' }, state('deny'))).toBe('loosen');
    // a rule the broker does not know: judged as loosening (the handler then says it is not there)
    expect(rights('rules.remove', { id: 'r' }, state(null))).toBe('loosen');
    expect(rights('trust.set', { on: true })).toBe('loosen');
    expect(rights('trust.set', { on: false })).toBe('tighten');
    expect(rights('settings.set', { key: 'k', value: 'v' }, state(null, true))).toBe('tighten');
    expect(rights('settings.set', { key: 'k', value: 'v' }, state(null, false))).toBe('loosen');
    for (const name of ['clients.unprotect', 'pins.accept', 'inverses.set', 'inverses.remove', 'file-tools.set', 'file-tools.remove', 'undo', 'rollback', 'presence.confirm', 'passkey.remove']) expect(rights(name, {}), name).toBe('loosen');
    for (const name of ['clients.protect', 'presence.end']) expect(rights(name, {}), name).toBe('tighten');
    for (const name of ['status', 'pending', 'history', 'events', 'rules.list', 'settings.list', 'presence.status', 'presence.challenge', 'ui.link']) expect(rights(name, {}), name).toBe('read');
  });
});

describe('settingTightens', () => {
  test('follows each setting\'s stricter direction; a setting with none always needs a proof', () => {
    expect(settingTightens('tripwire', 'off', 'on')).toBe(true);
    expect(settingTightens('tripwire', 'on', 'off')).toBe(false);
    expect(settingTightens('tripwire-calls', '30', '10')).toBe(true);
    expect(settingTightens('tripwire-calls', '30', '31')).toBe(false);
    expect(settingTightens('tripwire-seconds', '10', '20')).toBe(true);
    expect(settingTightens('ticket-timeout', '120', '300')).toBe(false);
    // a shorter journal lets an agent's traces go sooner: keeping less loosens
    expect(settingTightens('journal-days', '90', '1')).toBe(false);
    expect(settingTightens('presence-lease', '300', '0')).toBe(true);
    expect(settingTightens('presence-lease', '300', '3600')).toBe(false);
    expect(settingTightens('approval-style', 'popup', 'notification')).toBe(false);
    expect(settingTightens('approval-style', 'popup', 'popup')).toBe(true);
    // a value the setting does not take changes nothing: the handler refuses it with its own reason
    expect(settingTightens('tripwire', 'on', 'maybe')).toBe(true);
    expect(settingTightens('no-such', 'a', 'b')).toBe(true);
  });
});
