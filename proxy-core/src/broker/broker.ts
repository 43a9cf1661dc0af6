/**
 * The broker: one per user. A facade over its parts — sessions and policy pushes (sessions.ts), tickets
 * (tickets/), server catalogs and observations (catalogs.ts, catalog-view.ts), file tools and previews
 * (undo/file-tools.ts, tickets/preview.ts), the rules (rule-book.ts), E-Stop and the tripwire (estop.ts), the
 * clients' configs (client-configs.ts), check-ups (inspections.ts), the journal writer (journal-writer.ts) and
 * the event stream (events.ts) — with one typed API that the CLI and UIs reach over the socket. Each method of
 * the protocol (protocol/methods/) has one handler, bound beside the feature that implements it
 * (tickets/api.ts, undo/api.ts, rules-api.ts, ...); connections (connection.ts) and an in-process host
 * (`callUser`) reach them through one dispatch chain (api/dispatch.ts).
 *
 * A change that tightens (E-Stop, a deny rule) is not reported done until every connected wrapper has applied
 * it, so "the very next call" sees it.
 */
import type { Channel } from '../ipc/channel.js';
import { type MatchEnv, systemMatchEnv } from '../policy/arg-conditions.js';
import type { Rule } from '../policy/rules.js';
import type { BrokerEvent, BrokerStatus, CheckedParamsOf, FileTool, Remember, ResultOf, Ticket, ArgCondition } from '../protocol/api.js';
import type { EventDetails, EventType } from '../protocol/events.js';
import type { Role } from '../protocol/names.js';
import { type Clock, systemClock } from '../util/clock.js';
import { dispatchers } from './api/dispatch.js';
import { Handlers, inProcess } from './api/handlers.js';
import { bindCatalog, setFileTool } from './catalog-api.js';
import { ServerCatalogs, type OutputSchemaCheck } from './catalogs.js';
import { ClientConfigsApi } from './client-configs.js';
import { bindClients } from './clients-api.js';
import { Connections } from './connection.js';
import { bindEstop } from './estop-api.js';
import { EstopSwitch } from './estop.js';
import { EventBus, type Subscriber } from './events.js';
import { type FileToolDeclaration, FileTools } from './undo/file-tools.js';
import { Inspections } from './inspections.js';
import { bindJournal, callHistory } from './journal-api.js';
import { JournalWriter } from './journal-writer.js';
import { JournalSafety } from './journal-safety.js';
import type { BrokerOptions, BrokerParts } from './parts.js';
import { Pins } from './pins.js';
import { RuleBook } from './rule-book.js';
import { addRule, bindRules, removeRule } from './rules-api.js';
import { Sessions } from './sessions.js';
import { bindSessions, brokerStatus, closeSession, policySnapshot, wrapperNote } from './sessions-api.js';
import { bindSettings, setSetting } from './settings-api.js';
import type { Store } from './db/store.js';
import { approveTicket, bindTickets, denyTicket } from './tickets/api.js';
import { proposeScopes } from './tickets/scopes.js';
import { TicketTimeout } from './tickets/timeout.js';
import { Tickets } from './tickets/tickets.js';
import { bindUndo } from './undo/api.js';
import { Undo } from './undo/undo.js';
import { BrokerUndoPort } from './undo-port.js';
import { bindPresence, PRESENCE_CONFIRMED_KEY, PRESENCE_USED_KEY } from './presence/api.js';
import { bindPasskeys, Passkeys } from './presence/passkeys.js';
import { type FrontEnd, Presence } from './presence/presence.js';
import { polkitAvailable } from './presence/polkit-available.js';
import { settingTightens, settingOrFallback, isSettingKey } from '../protocol/settings.js';
import type { RightsLookup } from '../protocol/presence.js';
import { reportIntegrity } from './integrity-api.js';
import type { OtlpExporter } from './otlp/exporter.js';
import { startOtlp } from './otlp/setup.js';
import { ManagedPolicyApi } from './managed/api.js';

export type { BrokerOptions } from './parts.js';

/** How often the newest seqs of the logs are recorded while the broker runs. */
const CHECKPOINT_MS = 60_000;

export class Broker implements BrokerParts {
  readonly store: Store;
  readonly clock: Clock;
  readonly bus: EventBus;
  readonly sessions: Sessions;
  readonly tickets: Tickets;
  readonly catalogs: ServerCatalogs;
  readonly journalWriter: JournalWriter;
  readonly ticketTimeout: TicketTimeout;
  readonly fileTools: FileTools;
  readonly pins: Pins;
  readonly clientConfigs: ClientConfigsApi;
  readonly inspections: Inspections;
  readonly matchEnv: MatchEnv;
  readonly ruleBook: RuleBook;
  /** E-Stop, the tripwire and its places for changing calls (estop.ts). */
  readonly estop: EstopSwitch;
  /** Snapshots, declared inverses, undo and rollback (undo.ts). */
  readonly undo: Undo;
  /** A full disk, lost journal entries, wrappers' spill files (journal-safety.ts). */
  readonly safety: JournalSafety;
  /** Presence proofs: the check every loosening call passes, leases, challenges (presence/). */
  readonly presence: Presence;
  readonly passkeys: Passkeys;
  /** What a call's rights depend on: the rule it removes, the setting it changes (protocol/presence.ts). */
  readonly rightsState: RightsLookup;
  /** One handler per declared method (api/handlers.ts). */
  readonly handlers = new Handlers();
  private readonly dispatch: ReturnType<typeof dispatchers>;
  private readonly attached: Connections;
  /** Records the newest seqs of the journal and the events now and then (db/log-marks.ts). */
  private readonly checkpoints: NodeJS.Timeout;
  /** The team policy file (managed/). */
  readonly managed: ManagedPolicyApi;
  /** The audit export to an OpenTelemetry collector (otlp/). */
  readonly otlp: OtlpExporter;
  /** Where `ui.link` gets a fresh sign-in link (`setUiLinks`). */
  uiLinks: (() => string) | null = null;

  constructor(readonly options: BrokerOptions) {
    this.store = options.store;
    this.clock = options.clock ?? systemClock;
    this.bus = new EventBus(this.store);
    this.safety = new JournalSafety({
      store: this.store,
      dataDir: options.dataDir,
      now: () => this.clock.now(),
      publish: (events) => this.bus.publish(events),
      journaled: (events) => this.journalWriter.handOff(events),
      // a full disk: every wrapper refuses calls (they could not be journaled); writable again: they resume
      diskChanged: () => void this.sessions.push().catch(() => {}),
    });
    const record = this.record;
    // before anything reads a rule or a setting: put back the tightening rows that went, find the rest (db/integrity.ts)
    this.safety.disk.write(() => void this.store.checkIntegrity());
    reportIntegrity(this.store.integrity, record);
    this.sessions = new Sessions({ clock: this.clock, ackTimeoutMs: options.ackTimeoutMs ?? 1500, snapshot: (s) => policySnapshot(this, s) });
    this.matchEnv = options.matchEnv ?? systemMatchEnv;
    this.ticketTimeout = new TicketTimeout(this.store, options.ticketTimeoutSeconds);
    this.ruleBook = new RuleBook({ store: this.store, clock: this.clock, record, ended: () => void this.sessions.push().catch(() => {}) });
    this.estop = new EstopSwitch({
      store: this.store,
      clock: this.clock,
      safety: this.safety,
      sessions: () => this.sessions,
      record,
      denyHeld: () => this.tickets.denyAll(() => true, 'estop', 'E-Stop was pressed', 'estop'),
    });
    this.fileTools = new FileTools({ db: this.store.db, now: () => this.clock.now(), record, seals: this.store });
    this.pins = new Pins({ db: this.store.db, now: () => this.clock.now(), record, seals: this.store });
    this.undo = new Undo(
      new BrokerUndoPort({
        store: this.store,
        dataDir: options.dataDir,
        clock: this.clock,
        matchEnv: this.matchEnv,
        fileTools: this.fileTools,
        sessions: this.sessions,
        bus: this.bus,
        ticketTimeout: this.ticketTimeout,
        record,
        estop: () => this.estop.on,
        rules: () => this.ruleBook.list(),
      }),
    );
    this.tickets = new Tickets({
      store: this.store,
      clock: this.clock,
      timeoutSeconds: () => this.ticketTimeout.seconds,
      scopes: (session, tool, args) => {
        const fileTool = this.fileTools.get(session.info.server, tool);
        return proposeScopes(args, { env: this.matchEnv, cwd: session.cwd, pathArg: fileTool?.pathArg, contentArg: fileTool?.contentArg });
      },
      pinChange: (session, tool) => this.pins.ticketChange(session, tool),
      description: (session, tool) => this.pins.description(session, tool),
      undoable: (session, tool, args) => this.undo.ticketUndoable(session, tool, args),
      undoOf: (session, callId, tool) => this.undo.ticketUndo(session, callId, tool),
      record,
    });
    const env = options.env ?? process.env;
    this.clientConfigs = new ClientConfigsApi({
      env,
      dataDir: options.dataDir,
      launcher: options.launcher,
      record: (type, server, detail) => this.record(type, server, null, detail),
    });
    this.inspections = new Inspections(env);
    this.catalogs = new ServerCatalogs({ store: this.store, record, pins: this.pins });
    this.journalWriter = new JournalWriter({
      store: this.store,
      clock: this.clock,
      publish: (events) => this.bus.publish(events),
      // a snapshotted call that ended gets the state it left its files in; a call with an inverse, its plan
      committed: (calls) => this.undo.journaled(calls),
      refused: (error, client) => this.record('journal-entry-refused', null, null, { error, client }),
      failed: (err) => this.safety.disk.failed(err),
      exported: (records) => this.otlp.calls(records),
      busy: () => this.dispatch.busy(),
    });
    this.otlp = startOtlp({ store: this.store, bus: this.bus, record, env, version: '0.1.0', ...(options.otlpQueueMax ? { queueMax: options.otlpQueueMax } : {}) });

    this.rightsState = {
      passkeys: () => this.passkeys.count(),
      // a rule row ignored for want of a seal is an allow rule not in force: removing it loosens nothing
      ruleAction: (id) => this.ruleBook.list().find((r) => r.id === id)?.action ?? (this.store.ruleSet.rows().some(({ row }) => row.id === id) ? 'allow' : null),
      // a setting the team policy holds is refused by its handler whichever way it goes: no proof is asked for it
      settingTightens: (key, value) => this.managed.setsSetting(key) || settingTightens(key, isSettingKey(key) ? (key === 'ticket-timeout' ? this.ticketTimeout.shown() : settingOrFallback(key, this.store.getSetting(key))) : '', value),
    };
    const presence = options.presence ?? {};
    this.presence = new Presence({
      required: presence.required ?? true,
      clock: this.clock,
      record,
      lookup: { ticket: (id) => this.tickets.get(id), rule: (id) => this.ruleBook.list().find((r) => r.id === id) ?? null, passkey: (id) => this.passkeys.nameOf(id) },
      leaseSeconds: () => Number(settingOrFallback('presence-lease', this.store.getSetting('presence-lease'))),
      ...(presence.appKey ? { appKey: presence.appKey } : {}),
      ...(presence.polkit ? { polkit: presence.polkit } : {}),
      polkitAvailable: presence.polkitAvailable ?? polkitAvailable(),
      used: () => this.safety.disk.write(() => this.store.setSetting(PRESENCE_USED_KEY, '1')),
    });
    this.passkeys = new Passkeys({
      db: this.store.db,
      sealer: this.store.sealer,
      clock: this.clock,
      record,
      presence: this.presence,
      getSetting: (key) => this.store.getSetting(key),
      setSetting: (key, value) => this.safety.disk.write(() => this.store.setSetting(key, value)),
    });
    // a confirmation of running without proofs holds for one start: a broker restarted into it says so again
    this.safety.disk.write(() => this.store.setSetting(PRESENCE_CONFIRMED_KEY, ''));
    if (!this.presence.required) record('presence-off', null, null, { after: this.store.getSetting(PRESENCE_USED_KEY) === '1' });

    // the API: every declared method bound, by the feature that implements it (a missing one stops the start)
    const on = this.handlers.on;
    bindSessions(on, this);
    bindTickets(on, this);
    bindJournal(on, this);
    bindRules(on, this);
    bindEstop(on, this);
    bindSettings(on, this);
    bindCatalog(on, this);
    bindClients(on, this);
    bindUndo(on, this.undo, () => this.journalWriter.settle());
    bindPresence(on, {
      presence: this.presence,
      record,
      rightsState: this.rightsState,
      extraKinds: (kind) => this.passkeys.kinds(kind),
      passkeyCount: () => this.passkeys.count(),
      getSetting: (key) => this.store.getSetting(key),
      setSetting: (key, value) => this.safety.disk.write(() => this.store.setSetting(key, value)),
      webauthn: () => this.passkeys.challengeOptions(),
    });
    bindPasskeys(on, this.passkeys);
    this.handlers.complete();
    this.managed = new ManagedPolicyApi(
      {
        clock: this.clock,
        record: this.record,
        ticket: (id) => this.tickets.get(id),
        setting: (key) => this.store.getSetting(key),
        setSetting: (key, value) => setSetting(this, key, value),
        push: () => this.sessions.push(),
      },
      options.managed ?? {},
    );
    this.managed.guard(this.handlers);
    this.dispatch = dispatchers(this.handlers, this.safety, this.presence, this.rightsState);
    this.attached = new Connections({
      dispatch: this.dispatch.socket,
      note: (session, method, params) => wrapperNote(this, session, method, params),
      closed: (context) => {
        for (const id of context.subscriptions) this.bus.unsubscribe(id);
        if (context.session) closeSession(this, context.session);
      },
      // a lease is held by its connection: it ends with it
      ended: (key) => this.presence.leases.end(key),
    });

    let orphans = 0;
    // on a full disk the broker still starts (and refuses calls until it can journal them)
    this.safety.disk.write(() => {
      this.store.endAllSessions();
      orphans = this.store.closeOrphanTickets();
    });
    if (orphans > 0) this.record('broker-restart', null, null, { orphanTickets: orphans });
    this.checkpoints = setInterval(() => this.safety.disk.write(() => this.store.marks.checkpoint()), CHECKPOINT_MS);
    this.checkpoints.unref();
    // a reader of the journal or the events sees every batch taken in, and an event follows the calls that came
    // before it; what a stopped broker left in the intake goes in now
    this.store.fileIntake = () => this.journalWriter.catchUp();
    // a call with a declared inverse gets its undo record in the transaction that files it
    this.store.filing = (events) => this.undo.filing(events.map((e) => e.detail));
    this.journalWriter.flush();
  }

  /** Store an event and publish it to subscribers (kept and stored later while the disk refuses: journal-safety.ts). */
  readonly record = <K extends EventType>(type: K, server: string | null, tool: string | null, detail: EventDetails[K]): BrokerEvent => this.safety.record(type, server, tool, detail);

  setOutputSchemaCheck(check: OutputSchemaCheck): void {
    this.catalogs.setOutputSchemaCheck(check);
  }

  /** Where `ui.link` gets a fresh sign-in link: the UI host, once it runs (start.ts). */
  setUiLinks(issue: (() => string) | null): void {
    this.uiLinks = issue;
  }

  // ---- connections ---------------------------------------------------------------------------------------

  /** Call one user method by name with unchecked params: how a host with no socket (the app) reaches the API. */
  callUser(method: string, params: unknown, frontEnd?: FrontEnd): unknown {
    return this.dispatch.inProcess({ method, params, caller: 'user', context: inProcess(frontEnd) });
  }

  /** Take over an authenticated connection; what it may call depends on its role. */
  attach(channel: Channel, role: Role): void {
    this.attached.attach(channel, role);
  }

  /** Every event after `since`, then live ones, in order; returns the subscription id and the current head. */
  subscribe(since: number, subscriber: Subscriber): { subscription: string; head: number } {
    const head = this.store.headSeq();
    return { subscription: this.bus.subscribe(since, subscriber), head };
  }

  unsubscribe(subscription: string): { ok: true } {
    this.bus.unsubscribe(subscription);
    return { ok: true };
  }

  /** Every open connection (wrappers, CLIs, UIs). */
  connections(): Channel[] {
    return this.attached.all();
  }

  // ---- typed calls for an in-process host (and tests): the same code the methods' handlers run -----------

  status(): BrokerStatus {
    return brokerStatus(this);
  }

  pending(): Ticket[] {
    return this.tickets.pending();
  }

  approve(id: string, remember: Remember = 'once', args?: ArgCondition[], undoable?: true, argsSeen?: string): Promise<ResultOf<'approve'>> {
    return approveTicket(this, { id, remember, ...(args ? { args } : {}), ...(undoable ? { undoable } : {}), ...(argsSeen ? { argsSeen } : {}) });
  }

  deny(id: string, reason?: string): ResultOf<'deny'> {
    return denyTicket(this, id, reason);
  }

  setEstop(on: boolean, why?: EventDetails['estop-on']): Promise<{ estop: boolean }> {
    return this.estop.set(on, why);
  }

  history(q: CheckedParamsOf<'history'>): ResultOf<'history'> {
    return callHistory(this, q);
  }

  events(q: CheckedParamsOf<'events'>): ResultOf<'events'> {
    return this.store.events(q);
  }

  rules(): Rule[] {
    return this.ruleBook.list();
  }

  addRule(p: CheckedParamsOf<'rules.add'>): Promise<Rule> {
    return addRule(this, p);
  }

  removeRule(id: string): Promise<{ ok: true }> {
    return removeRule(this, id);
  }

  setSetting(key: string, value: string): Promise<{ ok: true }> {
    return setSetting(this, key, value);
  }

  setFileTool(p: FileToolDeclaration): Promise<FileTool> {
    return setFileTool(this, p);
  }

  // ---- lifecycle -----------------------------------------------------------------------------------------

  /** Fail every pending ticket closed and write what is queued (the broker is going away). */
  shutdown(): void {
    clearInterval(this.checkpoints);
    this.inspections.stopAll();
    this.tickets.denyAll(() => true, 'broker-down', 'Airlock is shutting down', 'broker-shutdown');
    this.journalWriter.flush();
    this.otlp.stop();
    this.managed.stop();
    // the newest seqs, so rows deleted from the top while the broker is stopped are seen at the next start
    this.safety.disk.write(() => this.store.marks.checkpoint());
    this.safety.stop();
    this.ruleBook.close();
    this.bus.close('the broker is stopping');
  }
}
