/** What the window shows while a passkey is asked for (presence.ts): the statement being allowed. */
import type { PresenceHooks } from './presence.js';

export class PresencePrompt implements PresenceHooks {
  /** The statement the person is allowing while the browser's dialog is up; null when none is. */
  statement = $state<string | null>(null);

  /** `cancel`: give up the browser's open dialog (its request then fails as cancelled, and nothing changes). */
  constructor(readonly cancel: () => void) {}

  asking(statement: string): void {
    this.statement = statement;
  }

  done(): void {
    this.statement = null;
  }
}
