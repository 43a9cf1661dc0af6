/**
 * Passkeys (WebAuthn with user verification): the person's registered credentials, and the verifier of their
 * assertions. Until a passkey can be registered in this build, none is, and a passkey proof is refused.
 */
import type Database from 'better-sqlite3';
import { IpcError } from '../../ipc/channel.js';
import { passkeyList, passkeyOptions, passkeyRegister, passkeyRemove } from '../../protocol/methods/presence.js';
import type { PresenceChallenge, ProofKind } from '../../protocol/presence.js';
import type { Clock } from '../../util/clock.js';
import type { Bind } from '../api/handlers.js';
import type { RecordEvent } from '../events.js';
import type { Presence } from './presence.js';

export interface PasskeysDeps {
  db: Database.Database;
  clock: Pick<Clock, 'now'>;
  record: RecordEvent;
  presence: Presence;
}

export class Passkeys {
  constructor(readonly o: PasskeysDeps) {}

  count(): number {
    return 0;
  }

  /** The proof kinds passkeys add for a front end: a browser's, once one is registered. */
  kinds(_frontEnd: string): ProofKind[] {
    return [];
  }

  challengeOptions(): PresenceChallenge['webauthn'] | undefined {
    return undefined;
  }
}

export function bindPasskeys(on: Bind, _p: Passkeys): void {
  const unavailable = () => {
    throw new IpcError('unavailable', 'passkeys cannot be registered with this broker');
  };
  on(passkeyOptions, unavailable);
  on(passkeyRegister, unavailable);
  on(passkeyList, () => []);
  on(passkeyRemove, (p) => {
    throw new IpcError('not-found', `no passkey ${p.id}`);
  });
}
