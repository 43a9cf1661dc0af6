/**
 * How long a held call waits for a person: the `ticket-timeout` setting, or the daemon's `--ticket-timeout` flag
 * when it was given. The flag is saved as the setting when the setting can hold it; a shorter one (tests use 1 s)
 * holds for this run only, so a stored value is always one `settings` accepts.
 */
import { SETTINGS, settingProblem } from '../../protocol/settings.js';
import type { Store } from '../db/store.js';

export const TICKET_TIMEOUT_KEY = 'ticket-timeout';

export class TicketTimeout {
  private current: number;

  /** `given`: the daemon's flag (seconds), when there was one. */
  constructor(store: Store, given?: number) {
    if (given !== undefined && Number.isFinite(given) && given > 0) {
      this.current = given;
      if (settingProblem(TICKET_TIMEOUT_KEY, String(given)) === null) store.setSetting(TICKET_TIMEOUT_KEY, String(given));
    } else {
      this.current = TicketTimeout.parse(store.getSetting(TICKET_TIMEOUT_KEY));
    }
  }

  private static parse(stored: string | undefined): number {
    // a stored value out of range (a hand-edited database) is not believed: the fallback holds
    const text = stored !== undefined && settingProblem(TICKET_TIMEOUT_KEY, stored) === null ? stored : SETTINGS[TICKET_TIMEOUT_KEY].fallback;
    return Number(text);
  }

  /** Seconds, for tickets created from now on. */
  get seconds(): number {
    return this.current;
  }

  /** The setting was changed (already checked and stored). */
  changed(value: string): void {
    this.current = TicketTimeout.parse(value);
  }

  /** What `settings` shows for it: the timeout in force, which a short flag may have set for this run only. */
  shown(): string {
    return String(this.current);
  }
}
