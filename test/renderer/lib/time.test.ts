/** Times as the UI shows them: countdowns, durations, datetime-local values. */
import { describe, expect, test } from 'vitest';
import { countdownWords, formatCountdown, formatDuration, parseLocalDateTime } from '../../../renderer/src/lib/time.js';

describe('time', () => {
  test('countdowns', () => {
    expect(formatCountdown(119_001)).toBe('2:00');
    expect(formatCountdown(65_000)).toBe('1:05');
    expect(formatCountdown(9_000)).toBe('0:09');
    expect(formatCountdown(-5)).toBe('0:00');
    expect(formatCountdown(3_723_000)).toBe('1:02:03');
    expect(countdownWords(65_000)).toBe('1 minute 5 seconds');
    expect(countdownWords(1_000)).toBe('1 second');
  });

  test('durations and datetime-local values', () => {
    expect(formatDuration(850)).toBe('850 ms');
    expect(formatDuration(1234)).toBe('1.2 s');
    expect(formatDuration(184_000)).toBe('3 min 4 s');
    expect(parseLocalDateTime('')).toBeUndefined();
    expect(parseLocalDateTime('nonsense')).toBeUndefined();
    expect(parseLocalDateTime('2025-01-02T03:04')).toBe(new Date(2025, 0, 2, 3, 4).getTime());
  });
});
