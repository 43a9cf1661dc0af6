/**
 * The broker's settings a person may change directly, defined once for the broker (which checks and applies
 * them) and every front end (which shows and offers them). E-Stop, rules and trust are not settings: they
 * have their own requests, because changing them must reach every wrapper before it is reported done.
 */
export interface SettingSpec {
  /** The values it takes: a fixed list, or whole numbers in a range. */
  values: readonly string[] | { min: number; max: number };
  fallback: string;
  help: string;
}

export const SETTINGS = {
  'auto-protect': {
    values: ['on', 'off'],
    fallback: 'off',
    help: 'wrap MCP servers that appear later in a client config, as soon as they appear',
  },
  'journal-days': {
    values: { min: 1, max: 3650 },
    fallback: '90',
    help: 'days the journal and the events are kept; older entries are removed a little at a time',
  },
  'journal-mb': {
    values: { min: 10, max: 100_000 },
    fallback: '500',
    help: 'the most the journal may hold (MB of arguments, results and details); the oldest entries go first',
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
  if (Array.isArray(spec.values)) return (spec.values as readonly string[]).includes(value) ? null : `${key} takes ${(spec.values as readonly string[]).join(' or ')}`;
  const { min, max } = spec.values as { min: number; max: number };
  const n = Number(value);
  return /^\d+$/.test(value) && n >= min && n <= max ? null : `${key} takes a whole number from ${min} to ${max}`;
}

/** What a setting takes, for a help line. */
export function settingValues(key: SettingKey): string {
  const spec: SettingSpec = SETTINGS[key];
  return Array.isArray(spec.values) ? (spec.values as readonly string[]).join('|') : `${(spec.values as { min: number }).min}..${(spec.values as { max: number }).max}`;
}
