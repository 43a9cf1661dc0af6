/**
 * Grants as a card offers them and the Rules page shows them. Pure; "now" is always passed in.
 *
 * On a held call the person picks which calls (the broker's proposed scopes, narrowest first, then the whole
 * tool) and for how long (the next N calls, 15 minutes, until a time of day, for good), each option narrowest
 * first and the narrowest pre-selected. What they pick becomes the params of one `approve`.
 */
import type { ArgCondition, Rule, Ticket } from '@airlock/proxy-core/protocol/api';

/** How long a grant holds: a number of calls, a time, a time of day, or always (an ordinary allow rule). */
export type GrantLength = { kind: 'calls'; calls: number } | { kind: 'minutes'; minutes: number } | { kind: 'until'; time: string } | { kind: 'always' };

/** Which calls a grant covers: one of the ticket's scopes (by index), every call of the tool, or the undoable ones. */
export type GrantScope = { kind: 'scope'; index: number } | { kind: 'tool' } | { kind: 'undoable' };

export interface ScopeOption {
  scope: GrantScope;
  label: string;
  args?: ArgCondition[];
}

/** The scopes a ticket offers, narrowest first: the broker's own (widest last), calls Airlock can undo, the tool. */
export function scopeOptions(ticket: Pick<Ticket, 'scopes' | 'undoable' | 'tool'>): ScopeOption[] {
  const out: ScopeOption[] = (ticket.scopes ?? []).map((s, index) => ({ scope: { kind: 'scope', index }, label: s.label, args: s.args }));
  if (ticket.undoable) out.push({ scope: { kind: 'undoable' }, label: `every call of ${ticket.tool} that Airlock can undo` });
  out.push({ scope: { kind: 'tool' }, label: `every call of ${ticket.tool}` });
  return out;
}

/** The lengths offered, narrowest first (the first is pre-selected). */
export const LENGTHS: readonly GrantLength[] = [{ kind: 'calls', calls: 10 }, { kind: 'minutes', minutes: 15 }, { kind: 'until', time: '18:00' }, { kind: 'always' }];

/** The next instant the local clock shows `hhmm` ("18:00"), after `now`: today, or tomorrow once it has passed. Null when it is not a time. */
export function nextClockTime(hhmm: string, now: number): number | null {
  const m = /^([01]?\d|2[0-3]):([0-5]\d)$/.exec(hhmm.trim());
  if (!m) return null;
  const d = new Date(now);
  d.setHours(Number(m[1]), Number(m[2]), 0, 0);
  if (d.getTime() <= now) d.setDate(d.getDate() + 1);
  return d.getTime();
}

/** What one approve call takes for a grant on `ticket`, or the reason it cannot be made. */
export function approveParams(
  ticket: Pick<Ticket, 'id' | 'scopes'>,
  scope: GrantScope,
  length: GrantLength,
  now: number,
): { params: { id: string; remember: 'always'; args?: ArgCondition[]; undoable?: true; grant?: { calls?: number; seconds?: number; until?: number } } } | { error: string } {
  const params: { id: string; remember: 'always'; args?: ArgCondition[]; undoable?: true; grant?: { calls?: number; seconds?: number; until?: number } } = { id: ticket.id, remember: 'always' };
  if (scope.kind === 'scope') {
    const s = ticket.scopes?.[scope.index];
    if (!s) return { error: 'that scope is not offered for this call' };
    params.args = s.args;
  } else if (scope.kind === 'undoable') params.undoable = true;
  if (length.kind === 'calls') {
    if (!Number.isInteger(length.calls) || length.calls < 1 || length.calls > 1000) return { error: 'give a number of calls from 1 to 1000' };
    params.grant = { calls: length.calls };
  } else if (length.kind === 'minutes') params.grant = { seconds: length.minutes * 60 };
  else if (length.kind === 'until') {
    const until = nextClockTime(length.time, now);
    if (until === null) return { error: 'give a time of day as HH:MM, e.g. 18:00' };
    params.grant = { until };
  }
  return { params };
}

/** A length in words, as a radio option says it: "the next 10 calls like this", "for 15 minutes", "until 18:00", "always". */
export function lengthWords(length: GrantLength): string {
  switch (length.kind) {
    case 'calls':
      return `the next ${length.calls} ${length.calls === 1 ? 'call' : 'calls'} like this`;
    case 'minutes':
      return `for ${length.minutes} minutes`;
    case 'until':
      return `until ${length.time}`;
    case 'always':
      return 'always, until you remove the rule';
  }
}

function durationWords(ms: number): string {
  const total = Math.max(0, Math.round(ms / 1000));
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  if (h > 0) return `${h} h ${m} min`;
  if (m > 0) return `${m} ${m === 1 ? 'minute' : 'minutes'}`;
  return `${total} ${total === 1 ? 'second' : 'seconds'}`;
}

/** How a rule ends, for the Rules page: "12 minutes left", "3 of 10 calls left", or null for a rule that does not end. */
export function grantStatus(rule: Pick<Rule, 'expiresAt' | 'calls' | 'callsGranted'>, now: number): string | null {
  const parts: string[] = [];
  if (rule.calls !== undefined) parts.push(rule.callsGranted ? `${rule.calls} of ${rule.callsGranted} calls left` : `${rule.calls} calls left`);
  if (rule.expiresAt !== undefined) parts.push(rule.expiresAt > now ? `${durationWords(rule.expiresAt - now)} left` : 'ended');
  return parts.length ? parts.join(', ') : null;
}

/**
 * The keys that answer a card once its buttons are armed: 1 allows once, 2 for the session, 3 opens the grant
 * chooser, Esc denies. Null for any other key (or one typed into a field).
 */
export type CardKey = 'once' | 'session' | 'grant' | 'deny';
export function cardKey(e: Pick<KeyboardEvent, 'key' | 'altKey' | 'ctrlKey' | 'metaKey'>, inField: boolean): CardKey | null {
  if (e.key === 'Escape') return 'deny';
  if (inField || e.altKey || e.ctrlKey || e.metaKey) return null;
  return e.key === '1' ? 'once' : e.key === '2' ? 'session' : e.key === '3' ? 'grant' : null;
}

/** Whether two tickets are "like" each other for "Allow all like this": same server, tool and client. */
export function alike(a: Pick<Ticket, 'server' | 'tool' | 'client'>, b: Pick<Ticket, 'server' | 'tool' | 'client'>): boolean {
  return a.server === b.server && a.tool === b.tool && a.client === b.client;
}
