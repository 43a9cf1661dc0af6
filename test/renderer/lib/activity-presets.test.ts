import { describe, expect, test } from 'vitest';
import { emptyFilter, filterQuery } from '../../../renderer/src/lib/activity.js';
import { activePresets, applyPreset, localDateTime } from '../../../renderer/src/lib/activity-presets.js';

const now = new Date(2026, 11, 1, 14, 30, 12).getTime();
const session = { id: 's-1', client: 'claude-desktop' };

describe('presets', () => {
  test('last hour and today set the start and keep the rest of the filter', () => {
    const typed = { ...emptyFilter(), tool: 'write_file', to: '2026-12-01T15:00' };
    const hour = applyPreset(typed, 'hour', { now });
    expect(hour).toMatchObject({ tool: 'write_file', from: '2026-12-01T13:30', to: '' });
    expect(applyPreset(typed, 'today', { now })).toMatchObject({ from: '2026-12-01T00:00', to: '' });
    const q = filterQuery(hour as ReturnType<typeof emptyFilter>);
    if (typeof q === 'string') throw new Error(q);
    expect(q).toMatchObject({ tool: 'write_file', from: new Date(2026, 11, 1, 13, 30).getTime() });
  });

  test('this session and this client need a session, and become history filters', () => {
    expect(applyPreset(emptyFilter(), 'session', { now })).toBe('no wrapper session has been seen yet');
    const f = applyPreset(applyPreset(emptyFilter(), 'session', { now, session }) as ReturnType<typeof emptyFilter>, 'client', { now, session });
    expect(f).toMatchObject({ session: 's-1', client: 'claude-desktop' });
    expect(filterQuery(f as ReturnType<typeof emptyFilter>)).toEqual({ session: 's-1', client: 'claude-desktop' });
  });

  test('which presets a filter holds', () => {
    const f = applyPreset(emptyFilter(), 'hour', { now }) as ReturnType<typeof emptyFilter>;
    expect([...activePresets(f, { now: now + 30_000, session })]).toEqual(['hour']);
    expect([...activePresets({ ...emptyFilter(), client: 'claude-desktop', session: 's-1' }, { now, session })].sort()).toEqual(['client', 'session']);
    expect(localDateTime(new Date(2026, 0, 2, 3, 4).getTime())).toBe('2026-01-02T03:04');
  });
});
