/** The UI's words for classes, errors, resolutions and settings. */
import { describe, expect, test } from 'vitest';
import { classInfo } from '../../../renderer/src/lib/classes.js';
import { errorInfo, errorText } from '../../../renderer/src/lib/errors.js';
import { settingTitle, hasTimeoutSetting } from '../../../renderer/src/lib/settings.js';
import { resolutionText } from '../../../renderer/src/lib/words.js';

describe('words', () => {
  test('classes, errors, resolutions, settings', () => {
    expect(classInfo('destructive').tone).toBe('danger');
    expect(classInfo('read-only-trusted').tone).toBe('calm');
    expect(classInfo('something-new')).toMatchObject({ label: 'something-new', tone: 'danger' });
    expect(errorInfo(Object.assign(new Error('gone'), { code: 'not-pending' }))).toEqual({ code: 'not-pending', message: 'gone' });
    expect(errorText(Object.assign(new Error('unknown method inspect'), { code: 'unknown-method' }))).toMatch(/does not offer this yet/);
    expect(errorText('plain')).toBe('plain.');
    expect(resolutionText('approved', 'session')).toBe('Allowed for this session');
    expect(resolutionText('timeout')).toBe('Timed out (denied)');
    expect(settingTitle('auto-protect')).toBe('Protect new servers automatically');
    expect(settingTitle('new-thing')).toBe('New thing');
    expect(hasTimeoutSetting(['auto-protect', 'ticket-timeout'])).toBe(true);
  });
});
