/**
 * The Activity page's presets: last hour, today, this session, this client. Each sets fields of the filter and
 * leaves the others as they are, so a preset narrows what the person typed rather than replacing it. Pure: the
 * session and the client come from the caller (the open row's, or the newest session's).
 */
import type { ActivityFilter } from './activity.js';

export type Preset = 'hour' | 'today' | 'session' | 'client';

export const PRESETS: readonly { id: Preset; label: string }[] = [
  { id: 'hour', label: 'Last hour' },
  { id: 'today', label: 'Today' },
  { id: 'session', label: 'This session' },
  { id: 'client', label: 'This client' },
];

const pad = (n: number) => String(n).padStart(2, '0');

/** A moment as a `datetime-local` value (local time, to the minute). */
export function localDateTime(ms: number): string {
  const d = new Date(ms);
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

/** What a preset refers to: the session and client of the open row, or of the newest session. */
export interface PresetContext {
  now: number;
  session?: { id: string; client: string } | undefined;
}

/** The filter with the preset applied, or why it cannot be (no session known yet). */
export function applyPreset(f: ActivityFilter, preset: Preset, ctx: PresetContext): ActivityFilter | string {
  switch (preset) {
    case 'hour':
      return { ...f, from: localDateTime(ctx.now - 3_600_000), to: '' };
    case 'today': {
      const d = new Date(ctx.now);
      d.setHours(0, 0, 0, 0);
      return { ...f, from: localDateTime(d.getTime()), to: '' };
    }
    case 'session':
      return ctx.session ? { ...f, session: ctx.session.id } : 'no wrapper session has been seen yet';
    case 'client':
      return ctx.session ? { ...f, client: ctx.session.client } : 'no client has been seen yet';
  }
}

/** Which presets the filter holds now (a button shows it pressed). */
export function activePresets(f: ActivityFilter, ctx: PresetContext): Set<Preset> {
  const on = new Set<Preset>();
  // "last hour" and "today" are the starts they set, give or take the minute since
  const hour = applyPreset(f, 'hour', ctx) as ActivityFilter;
  const today = applyPreset(f, 'today', ctx) as ActivityFilter;
  if (f.from && !f.to && Math.abs(new Date(f.from).getTime() - new Date(hour.from).getTime()) <= 60_000) on.add('hour');
  if (f.from && !f.to && f.from === today.from) on.add('today');
  if (f.session) on.add('session');
  if (f.client && ctx.session && f.client === ctx.session.client) on.add('client');
  return on;
}
