/** The broker's settings: one read, one changed, all listed with what each takes. */
import { z } from 'zod';
import { method, QUICK_MS } from '../method.js';
import { UserMethod } from '../names.js';
import { Empty, Ok, text } from '../shapes.js';

export const SettingInfoSchema = z.object({
  key: z.string(),
  value: z.string(),
  fallback: z.string(),
  /** Values it takes: a list, whole numbers from min to max, or an http(s) URL ('' for none). */
  values: z.union([z.array(z.string()), z.object({ min: z.number(), max: z.number() }), z.literal('url')]),
  help: z.string(),
  /** Required by the team policy file (broker/managed/): shown, not changeable. */
  managed: z.literal(true).optional(),
});

export const settingsGet = method({ name: UserMethod.settingsGet, role: 'user', rights: 'read', params: z.object({ key: text(64) }).strict(), result: z.object({ value: z.string().nullable() }), wait: QUICK_MS });
export const settingsSet = method({ name: UserMethod.settingsSet, role: 'user', rights: (p, state) => (state.settingTightens(p.key, p.value) ? 'tighten' : 'loosen'), params: z.object({ key: text(64), value: z.string().max(512) }).strict(), result: Ok, wait: QUICK_MS });
export const settingsList = method({ name: UserMethod.settingsList, role: 'user', rights: 'read', params: Empty, result: z.array(SettingInfoSchema), wait: QUICK_MS });

export const settingMethods = [settingsGet, settingsSet, settingsList] as const;
