/**
 * Presence proofs (presence.ts): what this broker can verify and whether it asks for them, a challenge bound to
 * one loosening call, ending every lease (a locked screen, "lock now"), confirming a broker that runs without
 * proofs, and the passkeys a person registered for WebAuthn.
 */
import { z } from 'zod';
import { method, QUICK_MS } from '../method.js';
import { UserMethod } from '../names.js';
import { ChallengeSchema, ProofKindSchema } from '../presence.js';
import { Empty, Ok, text } from '../shapes.js';

export const PasskeySchema = z.object({ id: z.string(), name: z.string(), createdAt: z.number(), lastUsedAt: z.number().nullable() });

export const PresenceStatusSchema = z.object({
  /** Whether loosening needs a proof (false: `airlock daemon --no-presence`). */
  required: z.boolean(),
  /** A standing warning (running without proofs, proofs registered before and now off, ...); null when none. */
  warning: z.string().nullable(),
  /** The proofs this broker can verify from the caller's front end. */
  kinds: z.array(ProofKindSchema),
  passkeys: z.number().int().nonnegative(),
  /** This front end's lease: until when a loosening call needs no new proof. */
  lease: z.object({ kind: ProofKindSchema, since: z.number(), until: z.number() }).nullable(),
  leaseSeconds: z.number().int().nonnegative(),
});

export const presenceStatus = method({ name: UserMethod.presenceStatus, role: 'user', rights: 'read', params: Empty, result: PresenceStatusSchema, wait: QUICK_MS });

/**
 * A challenge for one loosening call: `method` and `params` as the call will send them. The answer names what
 * the call allows (`statement`): a proof over it is good for that call only, once, within a couple of minutes.
 */
export const presenceChallenge = method({
  name: UserMethod.presenceChallenge,
  role: 'user',
  rights: 'read',
  params: z.object({ method: text(64), params: z.unknown().optional() }).strict(),
  result: ChallengeSchema,
  wait: QUICK_MS,
});

/** End every presence lease (the screen locked, or the person pressed "lock now"): the next loosening needs a touch. */
export const presenceEnd = method({ name: UserMethod.presenceEnd, role: 'user', rights: 'tighten', params: Empty, result: Ok, wait: QUICK_MS });

/**
 * A person confirms, with a proof (even when the broker runs with --no-presence), a state that is not believed
 * until they do: the broker restarted without proofs after they had registered one.
 */
export const presenceConfirm = method({
  name: UserMethod.presenceConfirm,
  role: 'user',
  rights: 'loosen',
  // the proof rides as the params' `presence`, as every loosening call's does
  params: Empty,
  result: Ok,
  wait: 130_000,
});

/** Options for registering a passkey (WebAuthn `PublicKeyCredentialCreationOptionsJSON`). */
export const passkeyOptions = method({
  name: UserMethod.passkeyOptions,
  role: 'user',
  rights: 'read',
  params: z.object({ name: text(64).optional() }).strict(),
  result: z.object({ options: z.record(z.string(), z.unknown()) }),
  wait: QUICK_MS,
});

/**
 * Register a passkey (the browser's registration response). The first one needs no proof (there is none yet:
 * the event stream and every front end say a passkey was registered); each one after it needs a proof.
 */
export const passkeyRegister = method({
  name: UserMethod.passkeyRegister,
  role: 'user',
  // Not a tightening, honestly: the first passkey is the bootstrap, the one loosening that has no proof to
  // give, so it goes through as tightening does (seen by every front end as a passkey-registered event with
  // `first: true`). The handler refuses it still if another was registered while it was being verified.
  rights: (_p, state) => (state.passkeys() === 0 ? 'tighten' : 'loosen'),
  params: z.object({ name: text(64), response: z.record(z.string(), z.unknown()) }).strict(),
  result: PasskeySchema,
  wait: QUICK_MS,
});

export const passkeyList = method({ name: UserMethod.passkeyList, role: 'user', rights: 'read', params: Empty, result: z.array(PasskeySchema), wait: QUICK_MS });

/** Removing a passkey loosens: with none left, the next one registered needs no proof. */
export const passkeyRemove = method({ name: UserMethod.passkeyRemove, role: 'user', rights: 'loosen', params: z.object({ id: text(512) }).strict(), result: Ok, wait: QUICK_MS });

export const presenceMethods = [presenceStatus, presenceChallenge, presenceEnd, presenceConfirm, passkeyOptions, passkeyRegister, passkeyList, passkeyRemove] as const;
