/**
 * The presence methods (protocol/methods/presence.ts): what this broker verifies and asks for, a challenge for
 * one loosening call, ending every lease, confirming a broker that runs without proofs. The passkeys' methods
 * are bound by the passkeys' room (passkeys.ts).
 */
import { IpcError } from '../../ipc/channel.js';
import { methods } from '../../protocol/api.js';
import { rightsOf } from '../../protocol/method.js';
import { presenceChallenge, presenceConfirm, presenceEnd, presenceStatus } from '../../protocol/methods/presence.js';
import type { PresenceChallenge, ProofKind, RightsLookup } from '../../protocol/presence.js';
import type { Bind } from '../api/handlers.js';
import type { RecordEvent } from '../events.js';
import { bad, schemaMessage } from '../validate.js';
import type { Presence } from './presence.js';

/** Where the broker keeps that proofs were in use (so a restart without them is told), and when one confirmed it. */
export const PRESENCE_USED_KEY = 'presence.used';
export const PRESENCE_CONFIRMED_KEY = 'presence.confirmed';

export interface PresenceApiParts {
  readonly presence: Presence;
  readonly record: RecordEvent;
  readonly rightsState: RightsLookup;
  /** The kinds the passkeys' room adds (webauthn, once one is registered). */
  extraKinds(kind: 'ui' | 'cli' | 'app' | 'in-process'): ProofKind[];
  passkeyCount(): number;
  getSetting(key: string): string | undefined;
  setSetting(key: string, value: string): void;
  /** The passkeys' relying party and credentials, for a challenge a browser answers. */
  webauthn(): PresenceChallenge['webauthn'] | undefined;
}

/** The standing warning of a broker that runs without proofs: shown by `status`, the UI and the app. */
export function presenceWarning(b: Pick<PresenceApiParts, 'presence' | 'getSetting'>): string | null {
  if (b.presence.required) return null;
  const base = 'Presence proofs are off (the broker was started with --no-presence): any process of yours can approve calls and loosen rules.';
  const used = b.getSetting(PRESENCE_USED_KEY) === '1';
  const confirmed = b.getSetting(PRESENCE_CONFIRMED_KEY) === '1';
  return used && !confirmed ? `${base} Proofs were in use before this start: if you did not start it this way, something else did. Confirm it with a proof, or restart the broker without --no-presence.` : base;
}

export function bindPresence(on: Bind, b: PresenceApiParts): void {
  on(presenceStatus, (_p, call) => {
    const fe = call.frontEnd;
    const lease = b.presence.leases.get(fe.key, b.presence.o.leaseSeconds());
    return {
      required: b.presence.required,
      warning: presenceWarning(b),
      kinds: b.presence.kinds(fe, b.extraKinds(fe.kind)),
      passkeys: b.passkeyCount(),
      lease: lease ? { kind: lease.kind, since: lease.since, until: lease.until } : null,
      leaseSeconds: b.presence.o.leaseSeconds(),
    };
  });
  on(presenceChallenge, (p, call) => {
    const decl = Object.hasOwn(methods, p.method) ? (methods as Record<string, (typeof methods)[keyof typeof methods]>)[p.method] : undefined;
    if (!decl || decl.role === 'wrapper') throw new IpcError('unknown-method', `unknown method ${p.method}`);
    const raw = (p.params ?? {}) as Record<string, unknown>;
    const parsed = decl.params.safeParse(raw);
    if (!parsed.success) throw bad(`${p.method}: ${schemaMessage(parsed.error)}`);
    if (rightsOf(decl, parsed.data, b.rightsState) !== 'loosen') throw bad(`${p.method} with these params does not loosen anything: it needs no proof`);
    const c = b.presence.challenge(call.frontEnd, p.method, parsed.data);
    const webauthn = b.webauthn();
    return {
      id: c.id,
      challenge: c.bytes.toString('base64url'),
      statement: c.statement,
      expiresAt: c.expiresAt,
      kinds: b.presence.kinds(call.frontEnd, b.extraKinds(call.frontEnd.kind)),
      ...(webauthn ? { webauthn } : {}),
    };
  });
  on(presenceEnd, (_p, call) => {
    const leases = b.presence.endLeases();
    b.record('presence-leases-ended', null, null, { leases, channel: call.frontEnd.kind });
    return { ok: true as const };
  });
  on(presenceConfirm, (_p, _call, via) => {
    b.setSetting(PRESENCE_CONFIRMED_KEY, '1');
    b.record('presence-confirmed', null, null, { via });
    return { ok: true as const };
  });
}
