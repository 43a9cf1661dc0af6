/**
 * Passkeys (WebAuthn with user verification): the person's registered credentials, and the verifier of their
 * assertions (`presence.use('webauthn', ...)`). WebAuthn needs a secure context and a relying party that is a
 * domain, never an IP address: the browser UI is a relying party `localhost` at http://localhost:PORT (a
 * secure context by the browsers' own rule for loopback), and an assertion made for any other origin, for
 * another challenge, without user verification, by a key not registered here or with a signature counter that
 * went back (a cloned authenticator) is refused. Verification is @simplewebauthn/server's.
 *
 * A registration's challenge is kept here, bound to the UI session that asked for it, for one answer within a
 * few minutes. The first passkey needs no proof (there is none to give yet: passkey.register's rights say so);
 * every event stream and front end shows that one was registered, and each later one needs a proof.
 */
import { randomBytes } from 'node:crypto';
import type { AuthenticationResponseJSON, AuthenticatorTransport, RegistrationResponseJSON } from '@simplewebauthn/server';
import type Database from 'better-sqlite3';
import { IpcError } from '../../ipc/channel.js';
import { passkeyList, passkeyOptions, passkeyRegister, passkeyRemove } from '../../protocol/methods/presence.js';
import type { PresenceChallenge, Proof, ProofKind, Via } from '../../protocol/presence.js';
import type { Clock } from '../../util/clock.js';
import type { Bind } from '../api/handlers.js';
import { PasskeysTable, type PasskeyRow } from '../db/passkeys-table.js';
import type { Sealer } from '../db/seals.js';
import { PRESENCE_USED_KEY } from './api.js';
import type { RecordEvent } from '../events.js';
import type { OpenChallenge } from './challenges.js';
import type { FrontEnd, Presence, Verified } from './presence.js';

/** The relying party of the browser UI: WebAuthn takes no IP address, and localhost is a secure context. */
export const RP_ID = 'localhost';
export const RP_NAME = 'Airlock approvals';
/** How long a registration's challenge waits for the browser's answer (the dialog itself times out at 60 s). */
export const REGISTRATION_MS = 5 * 60_000;
const DIALOG_MS = 60_000;
/** Registrations waiting at once: a loop of `passkey.options` pushes out its own oldest. */
const MAX_PENDING = 64;
/** Where the stable user handle of this broker's passkeys is kept (one person: one handle). */
export const USER_ID_KEY = 'passkey.user-id';

type WebAuthnLib = typeof import('@simplewebauthn/server');
let lib: Promise<WebAuthnLib> | null = null;
/**
 * The verifier library, loaded on first use: its ASN.1 and X.509 code takes a good part of a second to load,
 * which a broker without a browser UI never needs and one with it should not spend before it answers.
 */
function webauthn(): Promise<WebAuthnLib> {
  lib ??= import('@simplewebauthn/server');
  return lib;
}

export interface PasskeysDeps {
  db: Database.Database;
  /** What seals each passkey's row (db/seals.ts). */
  sealer: Sealer;
  clock: Pick<Clock, 'now'>;
  record: RecordEvent;
  presence: Presence;
  getSetting(key: string): string | undefined;
  setSetting(key: string, value: string): void;
}

interface Pending {
  readonly challenge: string;
  readonly expiresAt: number;
}

export class Passkeys {
  readonly table: PasskeysTable;
  /** The origins of the browser UI that may make assertions (set when the UI host starts). */
  private origins: string[] = [];
  private readonly pending = new Map<string, Pending>();

  constructor(readonly o: PasskeysDeps) {
    this.table = new PasskeysTable(o.db, o.sealer);
    // a passkey written into the database while the broker was stopped is no passkey of the person's: said once
    for (const r of this.table.unsealed()) o.record('passkey-ignored', null, null, r);
    o.presence.use('webauthn', (proof, c) => this.verify(proof, c));
  }

  /** The UI host serves at this port: passkeys are made and used at http://localhost:PORT. */
  serveUiAt(port: number | null): void {
    this.origins = port === null ? [] : [`http://${RP_ID}:${port}`];
    // loaded once the broker is up rather than at the first touch (a load that fails is reported at use)
    if (port !== null) setImmediate(() => void webauthn().catch(() => {})).unref();
  }

  get expectedOrigins(): readonly string[] {
    return this.origins;
  }

  count(): number {
    return this.table.count();
  }

  list(): PasskeyRow[] {
    return this.table.list();
  }

  nameOf(id: string): string | null {
    return this.table.get(id)?.name ?? null;
  }

  /** The proof kinds passkeys add for a front end: a browser's, once one is registered. */
  kinds(frontEnd: string): ProofKind[] {
    return frontEnd === 'ui' && this.count() > 0 ? ['webauthn'] : [];
  }

  challengeOptions(): PresenceChallenge['webauthn'] | undefined {
    const rows = this.list();
    if (rows.length === 0) return undefined;
    return { rpId: RP_ID, allowCredentials: rows.map((r) => ({ id: r.id, ...(r.transports.length ? { transports: r.transports } : {}) })) };
  }

  /** Registration options for this UI session; its challenge is kept for one answer from the same session. */
  async options(frontEnd: FrontEnd): Promise<Record<string, unknown>> {
    this.needsUi();
    const { generateRegistrationOptions } = await webauthn();
    const options = await generateRegistrationOptions({
      rpName: RP_NAME,
      rpID: RP_ID,
      userName: 'approvals',
      userDisplayName: 'Airlock approvals',
      userID: this.userId(),
      timeout: DIALOG_MS,
      attestationType: 'none',
      excludeCredentials: this.list().map((r) => ({ id: r.id, transports: r.transports as AuthenticatorTransport[] })),
      authenticatorSelection: { residentKey: 'preferred', userVerification: 'required' },
    });
    this.sweep();
    this.pending.delete(frontEnd.key);
    while (this.pending.size >= MAX_PENDING) this.pending.delete(this.pending.keys().next().value!);
    this.pending.set(frontEnd.key, { challenge: options.challenge, expiresAt: this.o.clock.now() + REGISTRATION_MS });
    return options as unknown as Record<string, unknown>;
  }

  /**
   * Verify a registration answered in this UI session and keep its credential. `via`: how the call was let
   * through; without a proof it was the first passkey, and it stays so only if none was registered meanwhile.
   */
  async register(frontEnd: FrontEnd, name: string, response: Record<string, unknown>, via: Via): Promise<PasskeyRow> {
    this.needsUi();
    const pending = this.pending.get(frontEnd.key);
    // single use, whatever the answer: a failed attempt starts again from passkey.options
    this.pending.delete(frontEnd.key);
    if (!pending) throw new IpcError('bad-state', 'no passkey registration was started in this window (or it was answered already): start again');
    if (pending.expiresAt <= this.o.clock.now()) throw new IpcError('bad-state', 'the passkey registration expired: start again');
    const { verifyRegistrationResponse } = await webauthn();
    let verified;
    try {
      verified = await verifyRegistrationResponse({
        response: response as unknown as RegistrationResponseJSON,
        expectedChallenge: pending.challenge,
        expectedOrigin: [...this.origins],
        expectedRPID: RP_ID,
        requireUserVerification: true,
      });
    } catch (err) {
      throw new IpcError('bad-request', `the passkey was not registered: ${(err as Error).message}`);
    }
    if (!verified.verified) throw new IpcError('bad-request', 'the passkey was not registered: its registration did not verify');
    const { credential } = verified.registrationInfo;
    const unproven = via.proof === 'none' && !via.noPresence;
    const first = this.count() === 0;
    // two first registrations raced (the gate saw none for each): the later one needs a proof like any other
    if (unproven && !first) throw new IpcError('presence-required', 'another passkey was registered meanwhile: registering one more needs a proof with it');
    if (this.table.get(credential.id)) throw new IpcError('bad-state', 'this passkey is registered already');
    const unique = uniqueName(name, new Set(this.list().map((r) => r.name)));
    const row = { id: credential.id, publicKey: credential.publicKey, counter: credential.counter, transports: credential.transports ?? [], name: unique, createdAt: this.o.clock.now() };
    this.table.insert(row, via);
    // a proof now exists: a later start without proofs is told so (presence/api.ts)
    this.o.setSetting(PRESENCE_USED_KEY, '1');
    this.o.record('passkey-registered', null, null, { id: row.id, name: unique, first, via });
    return { ...row, lastUsedAt: null };
  }

  remove(id: string, via: Via): void {
    const row = this.table.get(id);
    if (!row || !this.table.remove(id)) throw new IpcError('not-found', `no passkey ${id}`);
    this.o.record('passkey-removed', null, null, { id, name: row.name, via });
  }

  /** The 'webauthn' verifier: an assertion over the challenge's bytes, with user verification, by a key of ours. */
  async verify(proof: Proof, c: OpenChallenge): Promise<Verified> {
    if (proof.kind !== 'webauthn') return { ok: false, reason: 'not a passkey proof' };
    if (this.origins.length === 0) return { ok: false, reason: 'this broker serves no browser UI, where passkeys are used' };
    const response = proof.response as unknown as AuthenticationResponseJSON;
    const id = typeof response.id === 'string' ? response.id : '';
    const row = id ? this.table.get(id) : null;
    if (!row) return { ok: false, reason: 'the passkey used is not one registered with Airlock' };
    const { verifyAuthenticationResponse } = await webauthn();
    let answer;
    try {
      answer = await verifyAuthenticationResponse({
        response,
        expectedChallenge: c.bytes.toString('base64url'),
        expectedOrigin: [...this.origins],
        expectedRPID: RP_ID,
        credential: { id: row.id, publicKey: row.publicKey as Uint8Array<ArrayBuffer>, counter: row.counter, transports: row.transports as AuthenticatorTransport[] },
        requireUserVerification: true,
      });
    } catch (err) {
      return { ok: false, reason: `the passkey's answer did not verify: ${(err as Error).message}` };
    }
    if (!answer.verified) return { ok: false, reason: "the passkey's answer did not verify" };
    if (!answer.authenticationInfo.userVerified) return { ok: false, reason: 'the passkey did not verify you (no PIN, fingerprint or face)' };
    this.table.used(row.id, answer.authenticationInfo.newCounter, this.o.clock.now());
    return { ok: true, label: row.name };
  }

  private needsUi(): void {
    if (this.origins.length === 0) throw new IpcError('unavailable', 'passkeys are made and used in the browser UI: start the broker with `airlock daemon --ui`');
  }

  private userId(): Uint8Array<ArrayBuffer> {
    let id = this.o.getSetting(USER_ID_KEY);
    if (!id || !/^[A-Za-z0-9_-]{16,64}$/.test(id)) {
      id = randomBytes(16).toString('base64url');
      this.o.setSetting(USER_ID_KEY, id);
    }
    return new Uint8Array(Buffer.from(id, 'base64url'));
  }

  private sweep(): void {
    const now = this.o.clock.now();
    for (const [key, p] of this.pending) if (p.expiresAt <= now) this.pending.delete(key);
  }
}

/** A name no other passkey has: the journal names the passkey that approved, so two must not read the same. */
export function uniqueName(name: string, taken: ReadonlySet<string>): string {
  if (!taken.has(name)) return name;
  for (let n = 2; ; n++) {
    const candidate = `${name.slice(0, 58)} (${n})`;
    if (!taken.has(candidate)) return candidate;
  }
}

export function bindPasskeys(on: Bind, p: Passkeys): void {
  on(passkeyOptions, async (_params, call) => ({ options: await p.options(call.frontEnd) }));
  on(passkeyRegister, async (params, call, via) => {
    const row = await p.register(call.frontEnd, params.name, params.response, via);
    return { id: row.id, name: row.name, createdAt: row.createdAt, lastUsedAt: row.lastUsedAt };
  });
  on(passkeyList, () => p.list().map((r) => ({ id: r.id, name: r.name, createdAt: r.createdAt, lastUsedAt: r.lastUsedAt })));
  on(passkeyRemove, (params, _call, via) => {
    p.remove(params.id, via);
    return { ok: true as const };
  });
}
