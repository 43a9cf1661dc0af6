/**
 * The broker's presence check (protocol/presence.ts): whether a loosening call may go ahead, on which proof,
 * and how its decision is described. A call that brings a proof is checked against the challenge it answers
 * (bound to exactly this call) by the verifier of its kind; one that brings none rides its front end's lease,
 * or is refused with what to do instead. Nothing a same-user process holds by itself (the socket's secret, a
 * UI session, the data dir) is a proof: it can read, deny and stop, and ask for a challenge, never answer one.
 *
 * `--no-presence` (the person's choice when starting the broker) lets loosening through unproven, said so in
 * every decision, in `status` and as an event.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { IpcError } from '../../ipc/channel.js';
import type { Peer } from '../../ipc/peer.js';
import { PRESENCE_REFUSED, PRESENCE_REQUIRED, type Proof, type ProofKind, type Via, describeOrigin } from '../../protocol/presence.js';
import type { FrontEndKind, PeerInfo } from '../../protocol/presence.js';
import type { Clock } from '../../util/clock.js';
import type { RecordEvent } from '../events.js';
import { bindingOf, Challenges, type OpenChallenge } from './challenges.js';
import { Leases } from './leases.js';
import { checkPolkit, type PolkitAnswer } from './polkit.js';
import { statementOf, type StatementLookup } from './statement.js';

/** Who a call comes from: the front end's kind (as its handshake named it), its lease key, and its process. */
export interface FrontEnd {
  readonly kind: FrontEndKind;
  /** What its lease and its challenges are held by: one connection, or one UI session. */
  readonly key: string;
  /** The process at the other end of the socket, as the OS names it (null: not known). */
  readonly peer: Peer | null;
}

export type Verified = { ok: true; label?: string } | { ok: false; reason: string };
export type Verifier = (proof: Proof, challenge: OpenChallenge, frontEnd: FrontEnd) => Promise<Verified> | Verified;

export interface PresenceOptions {
  /** False: the broker was started with --no-presence. */
  required: boolean;
  clock: Pick<Clock, 'now'>;
  record: RecordEvent;
  lookup: StatementLookup;
  /** The `presence-lease` setting, in seconds. */
  leaseSeconds(): number;
  /** The key the app handed the broker it started (never on disk): its Touch ID and click proofs are MACs under it. */
  appKey?: Buffer | null;
  /** How polkit is asked (tests give their own). */
  polkit?: (peer: Peer, statement: string) => Promise<PolkitAnswer>;
  /** Whether polkit can be asked on this machine at all. */
  polkitAvailable?: boolean;
  /** A proof verified: the broker keeps that proofs are in use (a later start without them says so). */
  used?: () => void;
}

/** A refused attempt is reported at most this often per kind of front end, program and method (an agent in a loop fills nothing). */
const REFUSAL_REPORT_MS = 10_000;

export function peerInfo(peer: Peer | null): PeerInfo | undefined {
  return peer ? { pid: peer.pid, uid: peer.uid, exe: peer.exe, tty: peer.tty } : undefined;
}

/** The MAC the app sends for one challenge: bound to the proof's kind, so a click's MAC is not Touch ID's. */
export function appProofMac(appKey: Buffer, kind: 'touch-id' | 'app-click', challenge: Buffer): string {
  return createHmac('sha256', appKey).update(`airlock-presence:${kind}:`).update(challenge).digest('hex');
}

export class Presence {
  readonly challenges: Challenges;
  readonly leases: Leases;
  private readonly verifiers = new Map<ProofKind, Verifier>();
  private readonly reported = new Map<string, number>();

  constructor(readonly o: PresenceOptions) {
    this.challenges = new Challenges(o.clock);
    this.leases = new Leases(o.clock);
    this.verifiers.set('polkit', (_proof, c, fe) => this.polkit(c, fe));
    const app: Verifier = (proof, c) => this.appProof(proof, c);
    this.verifiers.set('touch-id', app);
    this.verifiers.set('app-click', app);
  }

  get required(): boolean {
    return this.o.required;
  }

  /** Add the verifier of a kind (the passkeys', which keep their own credentials). */
  use(kind: ProofKind, verifier: Verifier): void {
    this.verifiers.set(kind, verifier);
  }

  /** The proofs this broker can verify for this front end now. */
  kinds(frontEnd: FrontEnd, extra: readonly ProofKind[] = []): ProofKind[] {
    const out: ProofKind[] = [...extra];
    // polkit only for a process with a terminal: it is asked for a password where the statement was shown
    if (this.o.polkitAvailable && frontEnd.peer?.tty) out.push('polkit');
    if (this.o.appKey) out.push('touch-id', 'app-click');
    return out;
  }

  /** A challenge for one loosening call (its checked params), for this front end to have the person answer. */
  challenge(frontEnd: FrontEnd, method: string, checked: unknown): OpenChallenge {
    return this.challenges.issue(frontEnd.key, bindingOf(method, checked), this.statement(method, checked));
  }

  /** What a loosening call (its checked params) allows, in words. */
  statement(method: string, checked: unknown): string {
    return statementOf(method, (checked ?? {}) as Record<string, unknown>, this.o.lookup);
  }

  /** The attribution of a call that needs no proof (reading, tightening): where it came from. */
  plain(frontEnd: FrontEnd): Via {
    const peer = peerInfo(frontEnd.peer);
    return { channel: frontEnd.kind, proof: 'none', ...(peer ? { peer } : {}) };
  }

  /**
   * Let a loosening call through, or refuse it: with a proof (verified against its challenge), within its front
   * end's lease, or unproven when presence is off. `always`: a proof is needed even with presence off.
   */
  admit(method: string, checked: unknown, proof: Proof | undefined, frontEnd: FrontEnd, always = false): Via | Promise<Via> {
    const base = this.plain(frontEnd);
    if (proof) return this.verify(method, checked, proof, frontEnd, base);
    if (!this.o.required && !always) return { ...base, noPresence: true };
    const lease = always ? null : this.leases.get(frontEnd.key, this.o.leaseSeconds());
    if (lease) return { ...base, proof: 'lease', leaseOf: lease.kind, leaseSince: lease.since, ...(lease.label ? { label: lease.label } : {}) };
    const statement = this.statement(method, checked);
    this.refused(method, statement, frontEnd, 'no proof');
    throw new IpcError(PRESENCE_REQUIRED, `${statement}: this needs your presence, and this request came from ${describeOrigin(base)}, which cannot prove a person is there. ${this.howTo(frontEnd)}`);
  }

  /** End every lease: the screen locked, or the person asked. */
  endLeases(): number {
    return this.leases.endAll();
  }

  private howTo(frontEnd: FrontEnd): string {
    const ways = ['approve in the Airlock app or in the browser UI with your passkey'];
    if (this.o.polkitAvailable) ways.push(frontEnd.peer?.tty ? 'answer the password prompt of `airlock approve`' : 'run `airlock approve` in a terminal, which asks for your password');
    return `To allow it: ${ways.join(', or ')}.`;
  }

  private async verify(method: string, checked: unknown, proof: Proof, frontEnd: FrontEnd, base: Via): Promise<Via> {
    const c = this.challenges.take(proof.challenge, frontEnd.key, bindingOf(method, checked));
    if (typeof c === 'string') {
      this.refused(method, this.statement(method, checked), frontEnd, c);
      throw new IpcError(PRESENCE_REFUSED, c);
    }
    const verifier = this.verifiers.get(proof.kind);
    let answer: Verified;
    try {
      answer = verifier ? await verifier(proof, c, frontEnd) : { ok: false, reason: `this broker cannot verify a ${proof.kind} proof` };
    } catch (err) {
      // a verifier that breaks refuses: never a yes by accident
      answer = { ok: false, reason: `the ${proof.kind} proof could not be checked: ${(err as Error).message}` };
    }
    if (!answer.ok) {
      this.refused(method, c.statement, frontEnd, answer.reason);
      throw new IpcError(PRESENCE_REFUSED, `${c.statement}: refused, ${answer.reason}`);
    }
    this.leases.grant(frontEnd.key, proof.kind, this.o.leaseSeconds(), answer.label);
    this.o.used?.();
    return { ...base, proof: proof.kind, ...(answer.label ? { label: answer.label } : {}) };
  }

  private async polkit(c: OpenChallenge, frontEnd: FrontEnd): Promise<Verified> {
    if (!this.o.polkitAvailable) return { ok: false, reason: 'polkit is not available on this machine' };
    if (!frontEnd.peer) return { ok: false, reason: 'the broker cannot see which process is asking, and polkit checks that process' };
    // a password typed into the desktop's prompt for a process with no terminal would be typed blind: that prompt
    // cannot show what it allows (polkit takes no details from a broker that is not root). The CLI in a terminal
    // prints the statement first and asks in the same terminal
    if (!frontEnd.peer.tty) return { ok: false, reason: 'a process without a terminal cannot confirm with your password (the prompt could not show what it allows)' };
    const answer = await (this.o.polkit ?? checkPolkit)(frontEnd.peer, c.statement);
    return answer.ok ? { ok: true } : { ok: false, reason: answer.reason };
  }

  private appProof(proof: Proof, c: OpenChallenge): Verified {
    if (proof.kind !== 'touch-id' && proof.kind !== 'app-click') return { ok: false, reason: 'not an app proof' };
    if (!this.o.appKey) return { ok: false, reason: 'this broker was not started by the Airlock app, so it has no app proofs to check' };
    const want = Buffer.from(appProofMac(this.o.appKey, proof.kind, c.bytes), 'hex');
    const got = Buffer.from(proof.mac, 'hex');
    return got.length === want.length && timingSafeEqual(got, want) ? { ok: true } : { ok: false, reason: 'the app proof does not match' };
  }

  private refused(method: string, statement: string, frontEnd: FrontEnd, reason: string): void {
    // by the kind of front end and its program, not its connection: an agent that connects anew for each try
    // (`airlock approve` in a loop) would otherwise be a new front end each time, and fill the events
    const key = `${frontEnd.kind}\n${frontEnd.peer?.exe ?? ''}\n${method}`;
    const now = this.o.clock.now();
    const last = this.reported.get(key);
    if (last !== undefined && now - last < REFUSAL_REPORT_MS) return;
    if (this.reported.size > 1000) this.reported.clear();
    this.reported.set(key, now);
    const peer = peerInfo(frontEnd.peer);
    this.o.record('presence-refused', null, null, { method, statement, channel: frontEnd.kind, reason, ...(peer ? { peer } : {}) });
  }
}
