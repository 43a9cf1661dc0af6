/**
 * The settings' methods. A setting the wrappers act on (the ticket timeout, whether the tripwire is on) reaches
 * every connected wrapper before its change is reported done.
 */
import type { SettingInfo } from '../protocol/api.js';
import { settingsGet, settingsList, settingsSet } from '../protocol/methods/settings.js';
import { settingInfos, type SettingKey } from '../protocol/settings.js';
import type { Via } from '../protocol/presence.js';
import type { Bind } from './api/handlers.js';
import { IN_PROCESS } from './tickets/api.js';
import type { BrokerParts } from './parts.js';
import { TICKET_TIMEOUT_KEY } from './tickets/timeout.js';
import { checkSetting } from './validate.js';

export function bindSettings(on: Bind, b: BrokerParts): void {
  on(settingsGet, (p) => {
    checkSetting(p.key);
    return { value: settingValue(b, p.key as SettingKey) ?? null };
  });
  on(settingsSet, (p, _call, via) => setSetting(b, p.key, p.value, via));
  on(settingsList, () => settingList(b));
}

/** Change a setting; the ticket timeout also reaches every connected wrapper before this resolves. */
export async function setSetting(b: BrokerParts, key: string, value: string, via: Via = IN_PROCESS): Promise<{ ok: true }> {
  checkSetting(key, value);
  b.store.setSetting(key, value, via);
  b.record('setting-changed', null, null, { key, value });
  if (key.startsWith('tripwire')) {
    b.estop.reloadLimits();
    // whether a changing call needs a place is the wrappers' to know (it rides on the policy)
    if (key === 'tripwire') await b.sessions.push();
  }
  if (key.startsWith('otlp-')) b.otlp.changed();
  if (key === TICKET_TIMEOUT_KEY) {
    b.ticketTimeout.changed(value);
    await b.sessions.push();
  }
  return { ok: true };
}

function settingList(b: BrokerParts): SettingInfo[] {
  return settingInfos((key) => settingValue(b, key));
}

/** A setting as it holds now (the ticket timeout may be a short one the daemon was started with). */
function settingValue(b: BrokerParts, key: SettingKey): string | undefined {
  return key === TICKET_TIMEOUT_KEY ? b.ticketTimeout.shown() : b.store.getSetting(key);
}
