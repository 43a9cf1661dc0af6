/** Settings' titles as the Settings page shows them (a key it does not know is shown as it is). */

const TITLES: Readonly<Record<string, string>> = {
  'auto-protect': 'Protect new servers automatically',
  'journal-days': 'Keep the journal (days)',
  'journal-mb': 'Journal size limit (MB)',
  'ticket-timeout': 'Ticket timeout (seconds)',
  'snapshot-file-mb': 'Largest file kept for undo (MB)',
  'snapshot-total-mb': 'Space for undo copies (MB)',
  'estop-grace-seconds': 'Grace before a stopped server is terminated (seconds)',
  tripwire: 'Tripwire: E-Stop on a burst of changing calls',
  'tripwire-calls': 'Tripwire: changing calls allowed',
  'tripwire-seconds': 'Tripwire: within (seconds)',
  'tripwire-long-calls': 'Tripwire, long window: changing calls allowed',
  'tripwire-long-seconds': 'Tripwire, long window: within (seconds)',
  'approval-style': 'How the desktop app asks',
  'estop-shortcut': 'E-Stop keys (desktop app)',
  'otlp-endpoint': 'Audit export: OpenTelemetry collector URL',
  'otlp-content': 'Audit export: include arguments and results',
};

export function settingTitle(key: string): string {
  return TITLES[key] ?? key.replace(/-/g, ' ').replace(/^./, (c) => c.toUpperCase());
}

/** Whether the broker's settings already include the ticket timeout (else the page shows it read-only). */
export function hasTimeoutSetting(keys: readonly string[]): boolean {
  return keys.some((k) => /timeout/i.test(k));
}
