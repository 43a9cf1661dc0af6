/**
 * Presence: what a method's call may change, and the evidence that a person (not a process of theirs) said yes.
 *
 * Every method declares its rights (method.ts). Reading and tightening (deny, E-Stop on, a deny rule, trust off)
 * are open to every authenticated front end, the agent's own shell included: stopping must always be easy.
 * Loosening (approve, an allow rule, trust on, E-Stop off, a looser setting, ...) needs a presence proof bound to
 * exactly what it allows: the front end asks for a challenge naming the call (`presence.challenge`), has the
 * person answer it (a passkey's user verification, polkit's password, Touch ID or a click in the app), and sends
 * the call with the proof. A proof opens a short lease for that front end's session (`presence.lease` seconds),
 * like sudo's timestamp, so approving several calls in a row takes one touch.
 */
import { z } from 'zod';

/**
 * What a call can change. `report`: a wrapper's own report or question (it loosens nothing by itself: what it
 * carries is judged by the broker).
 */
export type Rights = 'read' | 'tighten' | 'loosen' | 'report';

/** What a rights function may look at: the broker's state a call's direction depends on. */
export interface RightsLookup {
  /** The action of a rule by its id (removing an allow rule tightens, removing a deny rule loosens). */
  ruleAction(id: string): 'allow' | 'deny' | 'ask' | null;
  /** Whether setting `key` to `value` makes Airlock stricter than it is now (unknown keys are not). */
  settingTightens(key: string, value: string): boolean;
  /** How many passkeys are registered (the first one needs no proof: there is none to give yet). */
  passkeys(): number;
}

/** The proofs a broker can verify. */
export const PROOF_KINDS = ['webauthn', 'polkit', 'touch-id', 'app-click'] as const;
export type ProofKind = (typeof PROOF_KINDS)[number];
export const ProofKindSchema = z.enum(PROOF_KINDS);

const challengeId = z.string().min(8).max(64);
const hex64 = z.string().regex(/^[0-9a-f]{64}$/);

/**
 * The proof a loosening call carries, as its params' `presence` (taken off the params before they meet the
 * method's own schema). Each answers one challenge the broker issued for exactly this call.
 */
export const ProofSchema = z.discriminatedUnion('kind', [
  /** A WebAuthn assertion (its JSON as the browser gives it) over the challenge, with user verification. */
  z.object({ kind: z.literal('webauthn'), challenge: challengeId, response: z.record(z.string(), z.unknown()) }).strict(),
  /** OS authentication: the broker asks polkit about the calling process itself (its peer credentials). */
  z.object({ kind: z.literal('polkit'), challenge: challengeId }).strict(),
  /**
   * The app's own window: Touch ID, or a click the app saw come from the person's input. `mac`: HMAC-SHA256 of
   * the challenge under the key the app handed the broker it started (never on disk).
   */
  z.object({ kind: z.enum(['touch-id', 'app-click']), challenge: challengeId, mac: hex64 }).strict(),
]);
export type Proof = z.infer<typeof ProofSchema>;

/** The front ends a call can come from, as the connection's handshake named it (a claim, not a proof). */
export const FrontEndKindSchema = z.enum(['cli', 'ui', 'app', 'in-process']);
export type FrontEndKind = z.infer<typeof FrontEndKindSchema>;

/** What the OS says of the process at the other end of the broker's socket (its peer credentials). */
export const PeerSchema = z.object({ pid: z.number().int(), uid: z.number().int(), exe: z.string().nullable(), tty: z.boolean() });
export type PeerInfo = z.infer<typeof PeerSchema>;

/**
 * How a decision was made: the channel, the peer process where the OS names it, and the proof that backed it.
 * `proof: 'none'` with `noPresence`: the broker was started with `--no-presence`.
 */
export const ViaSchema = z.object({
  channel: FrontEndKindSchema,
  proof: z.enum([...PROOF_KINDS, 'lease', 'none']),
  /** With `lease`: the proof that opened it, and when. */
  leaseOf: ProofKindSchema.optional(),
  leaseSince: z.number().optional(),
  /** What the proof names: a passkey's name, polkit's action. */
  label: z.string().max(200).optional(),
  noPresence: z.boolean().optional(),
  peer: PeerSchema.optional(),
});
export type Via = z.infer<typeof ViaSchema>;

const PROOF_WORDS: Record<ProofKind, string> = {
  webauthn: 'a passkey',
  polkit: 'your password (polkit)',
  'touch-id': 'Touch ID',
  'app-click': 'a click in the app',
};

const CHANNEL_WORDS: Record<FrontEndKind, string> = { cli: 'the CLI', ui: 'the browser', app: 'the app', 'in-process': 'Airlock itself' };

/** Where a call came from, in words: "a terminal (pid 12, node)", "a process without a terminal (pid 12, sh)". */
export function describeOrigin(via: Pick<Via, 'channel' | 'peer'>): string {
  if (!via.peer) return CHANNEL_WORDS[via.channel];
  const exe = via.peer.exe ? `, ${via.peer.exe.split('/').pop()}` : '';
  return `${via.peer.tty ? 'a terminal' : 'a process without a terminal'} (pid ${via.peer.pid}${exe})`;
}

/**
 * How a decision was made, in words for the journal, the UI and the CLI. Nothing says "you" unless a proof does:
 * "approved with a passkey in the browser", "with a presence lease (Touch ID, 2 min ago)", "from a process
 * without a terminal (pid 12, sh), presence proofs off".
 */
export function describeVia(via: Via, now = Date.now()): string {
  const where = describeOrigin(via);
  if (via.proof === 'none') return `from ${where}, without a presence proof${via.noPresence ? ' (the broker runs with --no-presence)' : ''}`;
  if (via.proof === 'lease') {
    const ago = via.leaseSince !== undefined ? `, ${Math.max(0, Math.round((now - via.leaseSince) / 60_000))} min ago` : '';
    return `by you, within a presence lease (${via.leaseOf ? PROOF_WORDS[via.leaseOf] : 'a proof'}${ago}) from ${where}`;
  }
  // the app's own proofs name their place ("a click in the app"): only the app holds the key they are made with
  const said = via.proof === 'touch-id' || via.proof === 'app-click';
  return `by you, with ${PROOF_WORDS[via.proof]}${via.label ? ` (${via.label})` : ''}${said ? '' : ` from ${where}`}`;
}

/** What a front end gets back from `presence.challenge`: what the person is asked to allow, and how to answer. */
export const ChallengeSchema = z.object({
  id: challengeId,
  /** base64url of the 32 bytes a proof signs (a passkey's challenge; the app's MAC input). */
  challenge: z.string(),
  /** What the call allows, in words: shown to the person, and what the challenge is bound to. */
  statement: z.string(),
  expiresAt: z.number(),
  /** The proofs this broker can verify from this front end now. */
  kinds: z.array(ProofKindSchema),
  /** For a passkey: the relying party and the credentials registered. */
  webauthn: z.object({ rpId: z.string(), allowCredentials: z.array(z.object({ id: z.string(), transports: z.array(z.string()).optional() })) }).optional(),
});
export type PresenceChallenge = z.infer<typeof ChallengeSchema>;

/** The error code of a loosening call that came without a proof (or lease); its data says how to get one. */
export const PRESENCE_REQUIRED = 'presence-required';
/** The error code of a proof that did not verify. */
export const PRESENCE_REFUSED = 'presence-refused';

/**
 * What made a stored row that loosens (an allow rule, trust, a looser setting, ...), kept with the row under its
 * seal (broker/db/seals.ts): the decision's `via`, or one of two origins that had no decision of a person: rows
 * that existed before the database kept seals, and the broker's own bookkeeping (a disk probe, its marks).
 */
export const RowOriginSchema = z.union([
  ViaSchema,
  z.object({ made: z.enum(['before-presence-proofs', 'by-airlock']) }).strict(),
]);
export type RowOrigin = z.infer<typeof RowOriginSchema>;

/** A row's origin in words: "made before presence proofs", or how its decision was made (describeVia). */
export function describeRowOrigin(origin: RowOrigin, now = Date.now()): string {
  if ('made' in origin) return origin.made === 'by-airlock' ? 'written by Airlock itself' : 'made before presence proofs';
  return describeVia(origin, now);
}
