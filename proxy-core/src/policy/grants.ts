/**
 * Grants: allow rules that end by themselves, after a time or a number of calls. Pure: the words a call allowed
 * by one is journaled with ("allowed by your 15-minute grant, 12 minutes left"), and the end a grant asked for
 * is given (from an approval's `grant`).
 */
import type { Rule } from './rules.js';

/** The longest a grant may run (a week): anything longer is an "always". */
export const GRANT_MAX_MS = 7 * 24 * 3600 * 1000;

/** "15 minutes", "1 hour 5 minutes", "40 seconds": a length of time in words. */
export function durationWords(ms: number): string {
  const total = Math.max(0, Math.round(ms / 1000));
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = total % 60;
  const unit = (n: number, one: string) => `${n} ${one}${n === 1 ? '' : 's'}`;
  if (h > 0) return m > 0 ? `${unit(h, 'hour')} ${unit(m, 'minute')}` : unit(h, 'hour');
  if (m > 0) return total < 600 && s > 0 ? `${unit(m, 'minute')} ${unit(s, 'second')}` : unit(m + (s >= 30 ? 1 : 0), 'minute');
  return unit(s, 'second');
}

/** What is left of a grant at `now`: "12 minutes left", "3 of 10 calls left", both when it has both. */
export function grantLeft(rule: Pick<Rule, 'expiresAt' | 'calls' | 'callsGranted'>, now: number): string {
  const parts: string[] = [];
  if (rule.calls !== undefined) parts.push(rule.callsGranted ? `${rule.calls} of ${rule.callsGranted} calls left` : `${rule.calls} ${rule.calls === 1 ? 'call' : 'calls'} left`);
  if (rule.expiresAt !== undefined) parts.push(`${durationWords(Math.max(0, rule.expiresAt - now))} left`);
  return parts.join(', ');
}

/** What kind of grant a rule is, in words: "15-minute grant", "grant of 10 calls", "grant until 18:00". */
export function grantKind(rule: Pick<Rule, 'expiresAt' | 'calls' | 'callsGranted' | 'createdAt'>): string {
  if (rule.calls !== undefined) return `grant of ${rule.callsGranted ?? rule.calls} ${(rule.callsGranted ?? rule.calls) === 1 ? 'call' : 'calls'}`;
  if (rule.expiresAt === undefined) return 'rule';
  const secs = Math.round((rule.expiresAt - rule.createdAt) / 1000);
  if (secs % 3600 === 0) return `${secs / 3600}-hour grant`;
  if (secs % 60 === 0) return `${secs / 60}-minute grant`;
  if (secs < 60) return `${secs}-second grant`;
  return `grant until ${clockTime(rule.expiresAt)}`;
}

/** The reason a call a grant decided is journaled with. */
export function grantReason(rule: Rule, now: number): string {
  return `allowed by your ${grantKind(rule)} ${rule.id}, ${grantLeft(rule, now)}`;
}

/** What an approval asked to grant (a time from now, an instant, a number of calls). */
export interface GrantAsk {
  seconds?: number | undefined;
  until?: number | undefined;
  calls?: number | undefined;
}

/**
 * The fields of the rule a grant makes at `now`, or an error saying why it cannot be one: an instant already
 * past, or further off than a week.
 */
export function grantFields(g: GrantAsk, now: number): { expiresAt?: number; calls?: number; callsGranted?: number } | { error: string } {
  const out: { expiresAt?: number; calls?: number; callsGranted?: number } = {};
  const end = g.seconds !== undefined ? now + g.seconds * 1000 : g.until;
  if (end !== undefined) {
    if (end <= now) return { error: 'the grant would end before it starts: give a time in the future' };
    if (end - now > GRANT_MAX_MS) return { error: 'a grant runs a week at most: for longer, allow always' };
    out.expiresAt = Math.round(end);
  }
  if (g.calls !== undefined) {
    out.calls = g.calls;
    out.callsGranted = g.calls;
  }
  return out;
}

/** "18:00": an instant as the local time of day. */
export function clockTime(ms: number): string {
  const d = new Date(ms);
  return `${String(d.getHours()).padStart(2, '0')}:${String(d.getMinutes()).padStart(2, '0')}`;
}
