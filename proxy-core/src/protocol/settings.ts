/**
 * The broker's settings a person may change directly, defined once for the broker (which checks and applies
 * them) and every front end (which shows and offers them). E-Stop, rules and trust are not settings: they
 * have their own requests, because changing them must reach every wrapper before it is reported done.
 */
import type { SettingInfo } from './api.js';

export interface SettingSpec {
  /** The values it takes: a fixed list, whole numbers in a range, or an http(s) URL ('' for none). */
  values: readonly string[] | { min: number; max: number } | 'url';
  fallback: string;
  help: string;
  /**
   * Which way is stricter: a setting changed that way may be changed by any front end; the other way needs a
   * presence proof (presence.ts). A list: its values from the strictest. 'set': giving a value where there was
   * none tightens, and clearing or changing one loosens. None: every change needs a proof.
   */
  stricter?: 'higher' | 'lower' | 'set' | readonly string[];
}

export const SETTINGS = {
  'auto-protect': {
    values: ['on', 'off'],
    fallback: 'off',
    help: 'wrap MCP servers that appear later in a client config, as soon as they appear',
    stricter: ['on', 'off'],
  },
  'journal-days': {
    values: { min: 1, max: 3650 },
    fallback: '90',
    help: 'days the journal and the events are kept; older entries are removed a little at a time',
    stricter: 'higher',
  },
  'journal-mb': {
    values: { min: 10, max: 100_000 },
    fallback: '500',
    help: 'the most the journal may hold (MB of arguments, results and details); the oldest entries go first',
    stricter: 'higher',
  },
  'ticket-timeout': {
    values: { min: 5, max: 86_400 },
    fallback: '120',
    help: 'seconds a held call waits for your answer before it is denied (applies to calls held after a change)',
    stricter: 'lower',
  },
  'snapshot-file-mb': {
    values: { min: 1, max: 1024 },
    fallback: '10',
    help: 'the largest file undo keeps a copy of before a call changes it (MB); a call on a bigger file runs, not undoable',
    stricter: 'higher',
  },
  'snapshot-total-mb': {
    values: { min: 10, max: 100_000 },
    fallback: '500',
    help: "the most undo's file copies may take (MB); the oldest calls' copies go first, and those calls can no longer be undone",
    stricter: 'higher',
  },
  'estop-grace-seconds': {
    values: { min: 0, max: 600 },
    fallback: '2',
    help: 'seconds a server gets to stop a call E-Stop cancelled before its process tree is terminated (restarted on release)',
    stricter: 'lower',
  },
  // The tripwire's defaults: a person approving calls one by one does not pass 3 a second for 10 s, and an agent
  // working through a model makes a call per turn (seconds apart; a batch of parallel calls is rarely 10+). More
  // than 30 changing calls in 10 s is a loop running at machine speed under a rule or a session approval: what
  // the tripwire is for. Refused calls and calls of read-only tools the person trusts never count; a read-only
  // claim nobody vouched for, or one evidence withdrew, does.
  tripwire: {
    values: ['on', 'off'],
    fallback: 'on',
    help: 'engage E-Stop by itself when more than tripwire-calls changing calls run within tripwire-seconds, across all sessions',
    stricter: ['on', 'off'],
  },
  'tripwire-calls': {
    values: { min: 1, max: 100_000 },
    fallback: '30',
    help: 'how many changing calls (allowed, and not read-only-trusted) may run within tripwire-seconds; the next one is held and E-Stop engages',
    stricter: 'lower',
  },
  'tripwire-seconds': {
    values: { min: 1, max: 3600 },
    fallback: '10',
    help: 'the window, in seconds, in which the tripwire counts changing calls',
    stricter: 'higher',
  },
  // The long window: a loop that stays just under the short limit (29 calls every 10 s, for ever) is a runaway
  // too. 300 in 10 minutes is one changing call every 2 s for 10 minutes without a pause, which a person
  // approving calls, or a model taking turns, does not keep up.
  'tripwire-long-calls': {
    values: { min: 1, max: 1_000_000 },
    fallback: '300',
    help: 'how many changing calls may run within tripwire-long-seconds before the tripwire engages E-Stop (a slow loop that never stops)',
    stricter: 'lower',
  },
  'tripwire-long-seconds': {
    values: { min: 1, max: 86_400 },
    fallback: '600',
    help: 'the long window, in seconds, in which the tripwire also counts changing calls',
    stricter: 'higher',
  },
  // How long one presence proof holds for the front end that gave it (like sudo's timestamp): a person approving
  // several calls in a row touches once. 0: every loosening action asks for its own proof.
  'presence-lease': {
    values: { min: 0, max: 3600 },
    fallback: '300',
    help: 'seconds a presence proof (passkey, password, Touch ID) holds for the front end that gave it; 0 asks every time',
    stricter: 'lower',
  },
  // The desktop app's: how it asks, and the keys of its global E-Stop. The keys are a short list rather than any
  // accelerator: a chord an editor or the OS already binds would fire E-Stop by accident, or never.
  'approval-style': {
    values: ['popup', 'dialog', 'notification'],
    fallback: 'popup',
    help: "how the desktop app asks: its approval popup, the system's message box, or a notification only",
  },
  'estop-shortcut': {
    values: ['CommandOrControl+Alt+Shift+K', 'CommandOrControl+Alt+Shift+J', 'CommandOrControl+Alt+Shift+Escape', 'CommandOrControl+Shift+F12', 'off'],
    fallback: 'CommandOrControl+Alt+Shift+K',
    help: "the desktop app's global keys that turn E-Stop on or off from any app (CommandOrControl is Cmd on macOS)",
  },
  // Audit export (broker/otlp/): where every call and decision goes as OpenTelemetry logs and spans. Setting it
  // where none was adds an audit trail; clearing it or pointing it elsewhere takes one away, so those need a proof.
  'otlp-endpoint': {
    values: 'url',
    fallback: '',
    help: 'the OpenTelemetry collector (OTLP/HTTP, e.g. http://127.0.0.1:4318) every call and decision is sent to; empty: none',
    stricter: 'set',
  },
  // Arguments and results can hold secrets: sending them to a collector, or no longer sending them, is a choice
  // a person makes with a proof either way.
  'otlp-content': {
    values: ['off', 'on'],
    fallback: 'off',
    help: "whether the export carries calls' arguments and results (off: their sizes and hashes only)",
  },
} as const satisfies Record<string, SettingSpec>;

export type SettingKey = keyof typeof SETTINGS;

export function isSettingKey(key: string): key is SettingKey {
  return Object.hasOwn(SETTINGS, key);
}

/** Why `value` is not a value of `key`, or null when it is. */
export function settingProblem(key: string, value: string): string | null {
  if (!isSettingKey(key)) return `unknown setting ${key} (known: ${Object.keys(SETTINGS).join(', ')})`;
  const spec: SettingSpec = SETTINGS[key];
  if (spec.values === 'url') return value === '' || httpUrl(value) ? null : `${key} takes an http:// or https:// URL, or nothing`;
  if (Array.isArray(spec.values)) return (spec.values as readonly string[]).includes(value) ? null : `${key} takes ${(spec.values as readonly string[]).join(' or ')}`;
  const { min, max } = spec.values as { min: number; max: number };
  const n = Number(value);
  return /^\d+$/.test(value) && n >= min && n <= max ? null : `${key} takes a whole number from ${min} to ${max}`;
}

/** Whether changing `key` from `from` to `to` makes Airlock stricter (or changes nothing): open to every front end. */
export function settingTightens(key: string, from: string, to: string): boolean {
  // a value the setting does not take changes nothing (the handler refuses it): the person hears why, not "needs a proof"
  if (!isSettingKey(key) || settingProblem(key, to) !== null) return true;
  if (from === to) return true;
  const order = (SETTINGS[key] as SettingSpec).stricter;
  if (order === undefined) return false;
  if (order === 'set') return from === '' && to !== '';
  if (order === 'higher' || order === 'lower') return order === 'higher' ? Number(to) > Number(from) : Number(to) < Number(from);
  const a = order.indexOf(from);
  const b = order.indexOf(to);
  return a >= 0 && b >= 0 && b < a;
}

/** A stored value of `key` if it is one the setting takes (a hand-edited database is not believed), else the fallback. */
export function settingOrFallback(key: SettingKey, stored: string | undefined): string {
  return stored !== undefined && settingProblem(key, stored) === null ? stored : SETTINGS[key].fallback;
}

/** Every setting with its current value (`valueOf` gives the stored one, undefined when unset), for a front end. */
export function settingInfos(valueOf: (key: SettingKey) => string | undefined): SettingInfo[] {
  return (Object.keys(SETTINGS) as SettingKey[]).map((key) => {
    const spec: SettingSpec = SETTINGS[key];
    const values = spec.values === 'url' ? ('url' as const) : Array.isArray(spec.values) ? [...(spec.values as readonly string[])] : { ...(spec.values as { min: number; max: number }) };
    return { key, value: valueOf(key) ?? spec.fallback, fallback: spec.fallback, values, help: spec.help };
  });
}

/** What a setting takes, for a help line. */
export function settingValues(key: SettingKey): string {
  const spec: SettingSpec = SETTINGS[key];
  if (spec.values === 'url') return 'URL|""';
  return Array.isArray(spec.values) ? (spec.values as readonly string[]).join('|') : `${(spec.values as { min: number }).min}..${(spec.values as { max: number }).max}`;
}

/** Whether `text` is an absolute http(s) URL without credentials (a password in a setting would be shown). */
function httpUrl(text: string): boolean {
  try {
    const u = new URL(text);
    return (u.protocol === 'http:' || u.protocol === 'https:') && u.username === '' && u.password === '';
  } catch {
    return false;
  }
}
