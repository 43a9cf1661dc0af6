/**
 * The app's presence proofs (protocol/presence.ts). Anything the person does in the app that loosens Airlock
 * (Allow in a popup, E-Stop off, an allow rule, Undo...) goes: does the broker say it loosens (it issues a
 * challenge bound to exactly that call only then)? was it the person (real input on the asking window, or the
 * app's own tray, shortcut, message box or notification)? then, within the front end's lease, the call as it
 * is; otherwise Touch ID where the Mac has it, else the click itself, answered as a MAC over the challenge
 * under the key the app handed the broker it started (daemon.ts). A broker the app only attached to has no
 * such key: the app says so, and where to approve instead.
 *
 * The screen locking or the machine going to sleep ends every lease at once.
 */
import {
  appProofMac,
  IpcError,
  type ParamsOf,
  PRESENCE_REFUSED,
  PRESENCE_REQUIRED,
  type ProofKind,
  type ResultOf,
  type UiMethod,
  userApi,
} from '@airlock/proxy-core';
import { type BrowserWindow, powerMonitor, systemPreferences } from 'electron';
import type { BrokerLink } from './broker.js';
import type { InputWitness } from './input-witness.js';
import { type Log, messageOf } from './log.js';
import { NO_APP_PROOFS } from './presence-text.js';
import { Signal } from './signal.js';
import type { AppState } from './state.js';

/**
 * Who asks. A page (`window`): only with the person's input on that window just before. The main process's own
 * UI (`via`: a tray item, the shortcut, a message box's button, a notification's): the OS delivered that input
 * to the app itself, never through a page.
 */
export type Asker = { window: BrowserWindow } | { via: string };

export interface ProofsDeps {
  broker: BrokerLink;
  state: AppState;
  witness: InputWitness;
  log: Log;
  now?: () => number;
}

const codeOf = (err: unknown): unknown => (err as { code?: unknown } | null)?.code;

/** Touch ID where Electron has it: `canPromptTouchID` exists on macOS only, and says whether the Mac has a sensor. */
function touchIdAvailable(): boolean {
  const prefs = systemPreferences as Partial<Pick<typeof systemPreferences, 'canPromptTouchID'>> | undefined;
  try {
    return typeof prefs?.canPromptTouchID === 'function' && prefs.canPromptTouchID();
  } catch {
    return false;
  }
}

export class Proofs {
  /** The lease, the warning or whether proofs are available changed: the tray redraws. */
  readonly changed = new Signal<void>();
  private lease: { kind: ProofKind; until: number } | null = null;
  private standingWarning: string | null = null;
  private required = true;
  private tick: NodeJS.Timeout | null = null;
  private readonly now: () => number;

  constructor(private readonly deps: ProofsDeps) {
    this.now = deps.now ?? Date.now;
    // a locked screen or a sleeping machine: whoever comes back proves again
    powerMonitor.on('lock-screen', () => void this.endLeases('the screen locked'));
    powerMonitor.on('suspend', () => void this.endLeases('the computer went to sleep'));
    deps.state.presenceChanged.on(() => void this.refresh());
    deps.broker.connected.on(() => void this.refresh());
  }

  /** Until when approvals need no new proof here (null: the next one asks). */
  get leaseUntil(): number | null {
    return this.lease && this.lease.until > this.now() ? this.lease.until : null;
  }

  /** The broker's standing warning (it runs without proofs, ...), or null. */
  get warning(): string | null {
    return this.standingWarning;
  }

  /** Whether approving here can work at all: the broker asks for proofs and the app holds no key for it. */
  get unavailable(): boolean {
    return this.required && this.deps.broker.isConnected && this.deps.broker.appKey === null;
  }

  /** A call made for the person: proven when it loosens (see the header), as it is otherwise. */
  async call<M extends UiMethod>(method: M, params: ParamsOf<M>, asker: Asker): Promise<ResultOf<M>> {
    const rights = userApi[method].rights;
    if (rights !== 'loosen' && typeof rights !== 'function') return this.deps.broker.call(method, params);
    // the input is weighed when the request arrives, before any round trip, and it is used up by this request
    const witnessed = 'window' in asker ? this.deps.witness.take(asker.window) : true;
    const client = await this.deps.broker.line();
    let challenge;
    try {
      challenge = await client.call('presence.challenge', { method, params });
    } catch (err) {
      // the broker issues challenges for loosening calls only: this one tightens (E-Stop on, a deny rule, a
      // stricter setting), or its params are wrong, which the call itself then says
      if (codeOf(err) === 'bad-request') return client.call(method, params);
      throw err;
    }
    if (!witnessed) {
      this.deps.log.warn(`refused ${method} from a window: no click or key press of the person's came with it`);
      throw new IpcError(PRESENCE_REFUSED, `${challenge.statement}: refused, the app saw no click or key press of yours in its window for this`);
    }
    const status = await client.call('presence.status', {});
    this.note(status);
    // a broker started with --no-presence checks nothing: the tray's warning says so
    if (!status.required) return client.call(method, params);
    if (status.lease && status.lease.until > this.now()) {
      try {
        return await client.call(method, params);
      } catch (err) {
        // the lease ran out between the two answers: prove
        if (codeOf(err) !== PRESENCE_REQUIRED) throw err;
      }
    }
    const key = this.deps.broker.appKey;
    if (!key || !challenge.kinds.includes('app-click')) throw new IpcError(PRESENCE_REQUIRED, `${challenge.statement}: ${NO_APP_PROOFS}`);
    const kind = await this.personSays(challenge.statement);
    const mac = appProofMac(key, kind, Buffer.from(challenge.challenge, 'base64url'));
    const result = await client.callWithProof(method, params, { kind, challenge: challenge.id, mac });
    this.deps.log.info(`${method}: proven with ${kind === 'touch-id' ? 'Touch ID' : 'a click in the app'}`);
    await this.refresh();
    return result;
  }

  /** End every lease (the broker's, for every front end): the next loosening asks again. */
  async endLeases(why: string): Promise<void> {
    this.setLease(null);
    try {
      await this.deps.broker.call('presence.end', {}, { waitMs: 0 });
      this.deps.log.info(`presence leases ended: ${why}`);
    } catch (err) {
      // no broker: its leases went with the app's connection
      this.deps.log.warn(`could not end presence leases (${why}): ${messageOf(err)}`);
    }
  }

  /** Read what the broker says of presence for the app's connection. */
  async refresh(): Promise<void> {
    try {
      this.note(await this.deps.broker.call('presence.status', {}, { waitMs: 0 }));
    } catch {
      // no broker: the tray shows that instead
    }
  }

  dispose(): void {
    if (this.tick) clearTimeout(this.tick);
    this.tick = null;
  }

  /** Touch ID over the statement where the Mac has it; else the click (or the tray's, the box's) itself. */
  private async personSays(statement: string): Promise<'touch-id' | 'app-click'> {
    if (!touchIdAvailable()) return 'app-click';
    try {
      await systemPreferences.promptTouchID(statement);
    } catch (err) {
      throw new IpcError(PRESENCE_REFUSED, `${statement}: refused, Touch ID did not confirm it (${messageOf(err)})`);
    }
    return 'touch-id';
  }

  private note(status: ResultOf<'presence.status'>): void {
    const before = JSON.stringify([this.required, this.standingWarning, this.lease]);
    this.required = status.required;
    this.standingWarning = status.warning;
    this.lease = status.lease ? { kind: status.lease.kind, until: status.lease.until } : null;
    this.setLease(this.lease);
    if (JSON.stringify([this.required, this.standingWarning, this.lease]) !== before) this.changed.emit();
  }

  /** Keep the tray's "N more minutes" current: a redraw at each minute left, and at the end. */
  private setLease(lease: { kind: ProofKind; until: number } | null): void {
    const had = this.lease !== null;
    this.lease = lease;
    if (this.tick) clearTimeout(this.tick);
    this.tick = null;
    if (had && !lease) this.changed.emit();
    if (!lease) return;
    const left = lease.until - this.now();
    if (left <= 0) {
      this.lease = null;
      this.changed.emit();
      return;
    }
    const step = left % 60_000 || 60_000;
    this.tick = setTimeout(() => {
      this.tick = null;
      this.changed.emit();
      this.setLease(this.lease);
    }, step + 5);
    this.tick.unref?.();
  }
}
