import { expect, test } from 'vitest';
import { withoutAirlockVars } from '../../../proxy-core/src/util/server-env.js';

test("a server's environment keeps everything but Airlock's own variables, whatever their case", () => {
  const env = { PATH: '/usr/bin', HOME: '/h', AIRLOCK_HOME: '/data', AIRLOCK_LAUNCHER: '["x"]', airlock_home: '/w', AIRLOCKED: 'kept', MY_AIRLOCK_HOME: 'kept' };
  expect(withoutAirlockVars(env)).toEqual({ PATH: '/usr/bin', HOME: '/h', AIRLOCKED: 'kept', MY_AIRLOCK_HOME: 'kept' });
  // the caller's object is left alone
  expect(env.AIRLOCK_HOME).toBe('/data');
});
