/**
 * The broker: one per user. A facade over its parts — sessions and policy pushes (sessions.ts), tickets
 * (tickets.ts) with their scopes (ticket-scopes.ts) and timeout (ticket-timeout.ts), server catalogs and
 * observations (catalogs.ts, catalog-view.ts), file tools and previews (file-tools.ts, preview.ts), the
 * clients' configs (client-configs.ts), check-ups (inspections.ts), the journal writer (journal-writer.ts) and
 * the event stream (events.ts) — with one typed API that the CLI and UIs reach over the socket through the
 * protocol's schemas (protocol/api.ts), and that an in-process host can call directly.
 *
 * A change that tightens (E-Stop, a deny rule) is not reported done until every connected wrapper has applied
 * it, so "the very next call" sees it.
 */
import { randomBytes } from 'node:crypto';
import type { Launcher } from '../clients/launcher.js';
import { type Channel, IpcError } from '../ipc/channel.js';
import type { Env } from '../ipc/paths.js';
import { isObject } from '../jsonrpc/messages.js';
import { type MatchEnv, systemMatchEnv } from '../policy/arg-conditions.js';
import type { PolicySnapshot } from '../policy/decide.js';
import { literalGlob } from '../policy/glob.js';
import { type Rule, rulesForSession } from '../policy/rules.js';
import {
  type ArgCondition,
  type AskAnswer,
  type BrokerEvent,
  type BrokerStatus,
  type CheckedParamsOf,
  type EstopCause,
  EstopCauseSchema,
  type FileTool,
  type Preview,
  type Remember,
  type ResultOf,
  type SettingInfo,
  type Ticket,
  userApi,
  type UserMethodKey,
  wrapperApi,
  type WrapperMethodKey,
  type WrapperParamsOf,
  type WrapperResultOf,
} from '../protocol/api.js';
import type { EventDetails, EventType } from '../protocol/events.js';
import { BrokerNote, BrokerToWrapper, PING, type Role, WrapperNote } from '../protocol/names.js';
import { settingInfos, type SettingKey, settingOrFallback } from '../protocol/settings.js';
import { type Clock, systemClock } from '../util/clock.js';
import { catalogView } from './catalog-view.js';
import { ServerCatalogs, type OutputSchemaCheck } from './catalogs.js';
import { ClientConfigsApi } from './client-configs.js';
import { EventBus, type Subscriber } from './events.js';
import { type FileToolDeclaration, FileTools } from './file-tools.js';
import { Inspections } from './inspections.js';
import { JournalWriter } from './journal-writer.js';
import { DISK_FULL_REASON, JournalSafety } from './journal-safety.js';
import { Pins } from './pins.js';
import { heldArguments, requireArgumentsSeen } from './held-arguments.js';
import { previewCall } from './preview.js';
import { parseJson } from './db/queries.js';
import { type Session, Sessions } from './sessions.js';
import type { Store } from './db/store.js';
import { proposeScopes } from './ticket-scopes.js';
import { TICKET_TIMEOUT_KEY, TicketTimeout } from './ticket-timeout.js';
import { newTicketId, Tickets } from './tickets.js';
import { Tripwire, tripwireLimits, type TripwireLimits } from './tripwire.js';
import { TripwireBudget } from './tripwire-budget.js';
import { Undo } from './undo.js';
import { bad, checkArgConditions, checkUndoCondition, checkSetting, schemaMessage } from './validate.js';

export interface BrokerOptions {
  store: Store;
  dataDir: string;
  /** The ticket timeout given at start (the daemon's --ticket-timeout); without one, the ticket-timeout setting. */
  ticketTimeoutSeconds?: number;
  /** How long a wrapper may take to apply a policy push before it is cut off (and so fails closed). */
  ackTimeoutMs?: number;
  clock?: Clock;
  /** The environment whose HOME, APPDATA, ... locate the MCP clients' configs (default process.env). */
  env?: Env;
  /** What protect writes into client configs to start Airlock (given by the composer); without one, protect is refused. */
  launcher?: Launcher;
  /** How path arguments are judged (home, platform, real paths): the system's unless a test says otherwise. */
  matchEnv?: MatchEnv;
}

/** A subscriber that has fallen this far behind (bytes not yet written to its socket) is dropped. */
const MAX_SUBSCRIBER_BACKLOG = 8 * 1024 * 1024;

type UserHandlers = { [M in UserMethodKey]: (p: CheckedParamsOf<M>, channel: Channel | null) => ResultOf<M> | Promise<ResultOf<M>> };
type WrapperHandlers = {
  [M in Exclude<WrapperMethodKey, 'session.open'>]: (session: Session, p: WrapperParamsOf<M>) => WrapperResultOf<M> | Promise<WrapperResultOf<M>>;
};

export class Broker {
  readonly store: Store;
  private readonly clock: Clock;
  private readonly bus: EventBus;
  private readonly sessions: Sessions;
  private readonly tickets: Tickets;
  private readonly catalogs: ServerCatalogs;
  private readonly journalWriter: JournalWriter;
  private readonly ticketTimeout: TicketTimeout;
  private readonly fileTools: FileTools;
  private readonly pins: Pins;
  private readonly clientConfigs: ClientConfigsApi;
  private readonly inspections: Inspections;
  private readonly matchEnv: MatchEnv;
  private readonly channels = new Set<Channel>();
  private rulesCache: Rule[];
  private estop: boolean;
  private estopCause: EstopCause | null;
  private readonly tripwire: Tripwire;
  /** The cap: places for changing calls, handed to the wrappers (tripwire-budget.ts). */
  private readonly budget: TripwireBudget;
  private tripwireLimits: TripwireLimits;
  /** Snapshots, declared inverses, undo and rollback (undo.ts). */
  readonly undo: Undo;
  /** A full disk, lost journal entries, wrappers' spill files (journal-safety.ts). */
  readonly safety: JournalSafety;

  constructor(readonly options: BrokerOptions) {
    this.store = options.store;
    this.clock = options.clock ?? systemClock;
    this.bus = new EventBus(this.store);
    this.safety = new JournalSafety({
      store: this.store,
      dataDir: options.dataDir,
      now: () => this.clock.now(),
      publish: (events) => this.bus.publish(events),
      journaled: (events) => this.journaled(events),
      // a full disk: every wrapper refuses calls (they could not be journaled); writable again: they resume
      diskChanged: () => void this.sessions.push().catch(() => {}),
    });
    const record = this.record.bind(this);
    this.sessions = new Sessions({ clock: this.clock, ackTimeoutMs: options.ackTimeoutMs ?? 1500, snapshot: (s) => this.snapshot(s) });
    this.matchEnv = options.matchEnv ?? systemMatchEnv;
    this.ticketTimeout = new TicketTimeout(this.store, options.ticketTimeoutSeconds);
    this.fileTools = new FileTools({ db: this.store.db, now: () => this.clock.now(), record });
    this.pins = new Pins({ db: this.store.db, now: () => this.clock.now(), record });
    this.undo = new Undo({
      store: this.store,
      dataDir: options.dataDir,
      clock: this.clock,
      matchEnv: this.matchEnv,
      fileTools: this.fileTools,
      sessions: () => this.sessions.all(),
      request: (sessionId, method, params, timeoutMs) => this.sessions.request(sessionId, method, params, timeoutMs),
      estop: () => this.estop,
      ticketTimeoutSeconds: () => this.ticketTimeout.seconds,
      rules: () => this.rulesCache,
      record,
      publish: (events) => this.bus.publish(events),
      push: (server) => this.sessions.push((s) => s.info.server === server),
    });
    this.tickets = new Tickets({
      store: this.store,
      clock: this.clock,
      timeoutSeconds: () => this.ticketTimeout.seconds,
      scopes: (session, tool, args) => {
        const fileTool = this.fileTools.get(session.info.server, tool);
        return proposeScopes(args, { env: this.matchEnv, cwd: session.cwd, pathArg: fileTool?.pathArg, contentArg: fileTool?.contentArg });
      },
      pinChange: (session, tool) => this.pins.ticketChange(session, tool),
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
    this.journalWriter = new JournalWriter(this.store, (events) => this.journaled(events), (error, client) => this.record('journal-entry-refused', null, null, { error, client }), (err) => this.safety.disk.failed(err));
    this.rulesCache = this.store.rules();
    this.estop = this.store.getSetting('estop') === 'on';
    this.estopCause = this.estop ? readEstopCause(this.store.getSetting('estop-cause')) : null;
    this.tripwire = new Tripwire(this.clock);
    this.tripwireLimits = tripwireLimits((key) => this.store.getSetting(key));
    this.budget = new TripwireBudget({
      clock: this.clock,
      limits: () => this.tripwireLimits,
      estop: () => this.estop,
      sessions: () => this.sessions.all().length,
      reclaim: (id) => this.sessions.get(id)?.channel.notify(BrokerNote.budgetReclaim, {}),
      trip: (reason) => void this.setEstop(true, { by: 'tripwire', reason }),
    });
    let orphans = 0;
    // on a full disk the broker still starts (and refuses calls until it can journal them)
    this.safety.disk.write(() => {
      this.store.endAllSessions();
      orphans = this.store.closeOrphanTickets();
    });
    if (orphans > 0) this.record('broker-restart', null, null, { orphanTickets: orphans });
  }

  private journaled(events: BrokerEvent[]): void {
    this.bus.publish(events);
    // a snapshotted call that ended gets the state it left its files in; a call with an inverse, its plan
    this.undo.journaled(events);
  }

  /** Store an event and publish it to subscribers (kept and stored later while the disk refuses: journal-safety.ts). */
  record<K extends EventType>(type: K, server: string | null, tool: string | null, detail: EventDetails[K]): BrokerEvent {
    return this.safety.record(type, server, tool, detail);
  }

  setOutputSchemaCheck(check: OutputSchemaCheck): void {
    this.catalogs.setOutputSchemaCheck(check);
  }

  /** Where `ui.link` gets a fresh sign-in link: the UI host, once it runs (start.ts). */
  setUiLinks(issue: (() => string) | null): void {
    this.uiLinks = issue;
  }
  private uiLinks: (() => string) | null = null;

  // ---- the typed API (what front ends call) --------------------------------------------------------------

  status(): BrokerStatus {
    return {
      estop: this.estop,
      estopCause: this.estopCause,
      pending: this.tickets.size,
      sessions: this.sessions.all().map((s) => s.info),
      dataDir: this.options.dataDir,
      pid: process.pid,
      ticketTimeoutSeconds: this.ticketTimeout.seconds,
      snapshots: this.undo.totals(),
      ...this.safety.status(),
    };
  }

  pending(): Ticket[] {
    return this.tickets.pending();
  }

  /** Approve a held call; `always` adds an allow rule, scoped to calls whose arguments meet `args` when given. */
  async approve(id: string, remember: Remember = 'once', args?: ArgCondition[], undoable?: true, argsSeen?: string): Promise<{ ok: true; ticket: Ticket; remember: Remember }> {
    if (args !== undefined && remember !== 'always') throw bad('argument conditions scope an "always" approval: give remember "always" with them');
    if (undoable && remember !== 'always') throw bad('"only calls Airlock can undo" scopes an "always" approval: give remember "always" with it');
    checkArgConditions(args);
    const open = this.tickets.require(id);
    requireArgumentsSeen(open.ticket, argsSeen);
    // the call could not be journaled: an approval now would let it run unrecorded
    if (this.safety.disk.full) throw new IpcError('disk-full', DISK_FULL_REASON);
    const { session, ticket } = open;
    if (remember === 'session') {
      session.sessionAllows.add(ticket.tool);
      await this.sessions.push((s) => s === session);
    } else if (remember === 'always') {
      const server = exactName(ticket.server);
      const tool = exactName(ticket.tool);
      this.insertRule({ action: 'allow', server, tool, ...(args?.length ? { args } : {}), ...(undoable ? { undoable } : {}), note: `from ticket ${ticket.id}` });
      await this.sessions.push();
    }
    // E-Stop may have been pressed while the push was in flight; it wins.
    if (!this.tickets.has(id)) throw new IpcError('not-pending', `ticket ${id} ended while it was being approved`);
    this.tickets.end(open, { decision: 'allow', decidedBy: 'user', ticketId: id, reason: 'approved by you', remember }, 'approved', remember);
    return { ok: true, ticket, remember };
  }

  deny(id: string, reason?: string): { ok: true; ticket: Ticket } {
    const open = this.tickets.require(id);
    const text = reason ? `denied by you: ${reason}` : 'denied by you';
    this.tickets.end(open, { decision: 'deny', decidedBy: 'user', ticketId: id, reason: text }, 'denied', null);
    return { ok: true, ticket: open.ticket };
  }

  /**
   * E-Stop on or off. On, every held call is denied and every wrapper, as it applies the push, also stops the
   * calls its server is running (wrap/estop.ts); this resolves once every wrapper has applied it.
   */
  async setEstop(on: boolean, why: EventDetails['estop-on'] = { by: 'user' }): Promise<{ estop: boolean }> {
    this.estop = on;
    // kept with the switch: after a restart, status still says why E-Stop is on
    this.estopCause = on ? { ...why, at: this.clock.now() } : null;
    // held in memory first: a disk that refuses the write keeps it pending, written as soon as it allows
    const cause = this.estopCause ? JSON.stringify(this.estopCause) : '';
    this.safety.disk.write(() => this.store.db.transaction(() => {
      this.store.setSetting('estop', on ? 'on' : 'off');
      this.store.setSetting('estop-cause', cause);
    })(), 'estop');
    if (on) {
      this.tripwire.reset();
      this.budget.reset();
      this.record('estop-on', null, null, why);
    } else this.record('estop-off', null, null, {});
    if (on) this.tickets.denyAll(() => true, 'estop', 'E-Stop was pressed', 'estop');
    await this.sessions.push();
    return { estop: on };
  }

  /** A page of the journal, each entry saying whether and how it can be undone. */
  history(q: CheckedParamsOf<'history'>): ResultOf<'history'> {
    return this.undo.annotate(this.store.history(q));
  }

  events(q: CheckedParamsOf<'events'>): ResultOf<'events'> {
    return this.store.events(q);
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

  rules(): Rule[] {
    return this.rulesCache;
  }

  async addRule(p: CheckedParamsOf<'rules.add'>): Promise<Rule> {
    checkArgConditions(p.args);
    checkUndoCondition(p.action, p.undoable);
    const rule = this.insertRule({
      action: p.action,
      server: p.server,
      tool: p.tool,
      ...(p.client !== undefined ? { client: p.client } : {}),
      ...(p.args?.length ? { args: p.args } : {}),
      ...(p.undoable !== undefined ? { undoable: p.undoable } : {}),
    });
    await this.sessions.push();
    return rule;
  }

  async removeRule(id: string): Promise<{ ok: true }> {
    if (!this.store.removeRule(id)) throw new IpcError('not-found', `no rule ${id} (see \`airlock rules\`)`);
    this.rulesCache = this.store.rules();
    this.record('rule-removed', null, null, { id });
    await this.sessions.push();
    return { ok: true };
  }

  async setTrust(server: string, on: boolean): Promise<{ server: string; trust: boolean }> {
    this.store.setTrust(server, on);
    this.record(on ? 'trust-on' : 'trust-off', server, null, {});
    await this.sessions.push((s) => s.info.server === server);
    return { server, trust: on };
  }

  trusted(): string[] {
    return this.store.trustedServers();
  }

  /** A server's tools as last listed, each with its withdrawn claim, the rules that may apply and its file tool. */
  catalog(server: string): ResultOf<'catalog'> {
    return catalogView({
      server,
      tools: this.store.catalog(server),
      rules: this.rulesCache,
      withdrawn: this.store.withdrawn(server),
      fileTool: (tool) => this.fileTools.get(server, tool),
      pin: (tool) => this.pins.get(server, tool),
    });
  }

  getSetting(key: string): { value: string | null } {
    checkSetting(key);
    return { value: this.settingValue(key as SettingKey) ?? null };
  }

  /** Change a setting; the ticket timeout also reaches every connected wrapper before this resolves. */
  async setSetting(key: string, value: string): Promise<{ ok: true }> {
    checkSetting(key, value);
    this.store.setSetting(key, value);
    this.record('setting-changed', null, null, { key, value });
    if (key.startsWith('tripwire')) {
      this.tripwireLimits = tripwireLimits((k) => this.store.getSetting(k));
      // whether a changing call needs a place is the wrappers' to know (it rides on the policy)
      if (key === 'tripwire') await this.sessions.push();
    }
    if (key === TICKET_TIMEOUT_KEY) {
      this.ticketTimeout.changed(value);
      await this.sessions.push();
    }
    return { ok: true };
  }

  settings(): SettingInfo[] {
    return settingInfos((key) => this.settingValue(key));
  }

  /** A setting as it holds now (the ticket timeout may be a short one the daemon was started with). */
  private settingValue(key: SettingKey): string | undefined {
    return key === TICKET_TIMEOUT_KEY ? this.ticketTimeout.shown() : this.store.getSetting(key);
  }

  /** A page of a held call's whole arguments, from the wrapper that holds it (held-arguments.ts). */
  ticketArguments(id: string, offset: number): Promise<ResultOf<'ticket.arguments'>> {
    return heldArguments(this.tickets.require(id), offset, (sessionId, params) => this.sessions.request(sessionId, BrokerToWrapper.heldArguments, params, 10_000));
  }

  /** What approving a held call would do to the file it writes (preview.ts). */
  async preview(id: string): Promise<Preview> {
    const { ticket, session } = this.tickets.require(id);
    return previewCall({ ticket, fileTool: this.fileTools.get(ticket.server, ticket.tool), cwd: session.cwd, command: session.info.command, env: this.matchEnv });
  }

  fileToolList(): FileTool[] {
    return this.fileTools.list();
  }

  /** Declare a file tool; the server's wrappers learn it (they snapshot its files before each call) before this resolves. */
  async setFileTool(p: FileToolDeclaration): Promise<FileTool> {
    const tool = this.fileTools.set(p);
    await this.sessions.push((s) => s.info.server === p.server);
    return tool;
  }

  async removeFileTool(server: string, tool: string): Promise<{ ok: true }> {
    const out = this.fileTools.remove(server, tool);
    await this.sessions.push((s) => s.info.server === server);
    return out;
  }

  /** Accept the definitions a server lists now (pins.ts); resolves once every wrapper of the server lifted the hold. */
  async acceptPins(server: string, tool?: string, fingerprint?: string): Promise<ResultOf<'pins.accept'>> {
    const accepted = this.pins.accept(server, tool, fingerprint);
    if (accepted.length > 0) await this.sessions.push((s) => s.info.server === server);
    return { accepted };
  }

  clients(): Promise<ResultOf<'clients.list'>> {
    return this.clientConfigs.list();
  }

  changeClients(action: 'protect' | 'unprotect', p: CheckedParamsOf<'clients.protect'>): Promise<ResultOf<'clients.protect'>> {
    return this.clientConfigs.change(action, p);
  }

  inspect(p: CheckedParamsOf<'inspect'>): Promise<ResultOf<'inspect'>> {
    return this.inspections.run(p);
  }

  /** Ask one connected wrapper something through its own connection. */
  async requestWrapper(sessionId: string, method: typeof BrokerToWrapper.status): Promise<{ sessionId: string; answer: unknown }> {
    return { sessionId, answer: await this.sessions.request(sessionId, method, {}) };
  }

  // ---- connections ---------------------------------------------------------------------------------------

  private readonly userHandlers: UserHandlers = {
    status: () => this.status(),
    pending: () => this.pending(),
    approve: (p) => this.approve(p.id, p.remember, p.args, p.undoable, p.argsSeen),
    deny: (p) => this.deny(p.id, p.reason),
    estop: (p) => this.setEstop(p.on),
    history: (p) => this.history(p),
    events: (p) => this.events(p),
    'events.subscribe': (p, channel) => {
      if (!channel) throw bad('a subscription needs a connection');
      return this.subscribeChannel(channel, p.since);
    },
    'events.unsubscribe': (p) => this.unsubscribe(p.subscription),
    'rules.list': () => this.rules(),
    'rules.add': (p) => this.addRule(p),
    'rules.remove': (p) => this.removeRule(p.id),
    'trust.set': (p) => this.setTrust(p.server, p.on),
    'trust.list': () => this.trusted(),
    catalog: (p) => this.catalog(p.server),
    'settings.get': (p) => this.getSetting(p.key),
    'settings.set': (p) => this.setSetting(p.key, p.value),
    'wrapper.request': (p) => this.requestWrapper(p.sessionId, p.method),
    'settings.list': () => this.settings(),
    'clients.list': () => this.clients(),
    'clients.protect': (p) => this.changeClients('protect', p),
    'clients.unprotect': (p) => this.changeClients('unprotect', p),
    inspect: (p) => this.inspect(p),
    'ticket.preview': (p) => this.preview(p.id),
    'ticket.arguments': (p) => this.ticketArguments(p.id, p.offset),
    'file-tools.list': () => this.fileToolList(),
    'file-tools.set': (p) => this.setFileTool(p),
    'file-tools.remove': (p) => this.removeFileTool(p.server, p.tool),
    'pins.list': (p) => this.pins.list(p.server),
    'pins.accept': (p) => this.acceptPins(p.server, p.tool, p.fingerprint),
    undo: (p) => this.undo.undo(p.id, p.force),
    'undo.last': (p) => this.undo.undoLast(p.server, p.force),
    rollback: (p) => this.undo.rollback(p.sessionId, p.force),
    'inverses.list': () => this.undo.declarations(),
    'inverses.set': (p) => this.undo.declare(p),
    'inverses.remove': (p) => this.undo.removeDeclaration(p.server, p.tool),
    'ui.link': () => {
      if (!this.uiLinks) throw new IpcError('bad-state', 'this broker serves no UI: start it with `airlock daemon --ui`');
      return { url: this.uiLinks() };
    },
  };

  private readonly wrapperHandlers: WrapperHandlers = {
    'call.ask': (session, p) => this.ask(session, p),
    journal: (session, p) => {
      if (p.lost) this.safety.addLost(p.lost, session.info);
      this.watchTripwire(session, p.entries);
      return this.journalWriter.write(session, p.entries);
    },
    'catalog.update': async (session, p) => {
      // a tool pinned for the first time: every wrapper of the server holds it to that pin from now on
      if (this.catalogs.update(session, p).pinned) await this.sessions.push((s) => s.info.server === session.info.server);
      // its `--undo` flags are checked against the tools it lists: one that does not fit is refused
      if (this.undo.catalogReported(session, p.verdicts)) await this.sessions.push((s) => s === session);
      return { ok: true as const };
    },
    // before a call of a file tool is sent: the prior state of its files (a refusal denies the call)
    'call.prepare': (session, p) => this.undo.prepare(session, p),
    'tripwire.budget': (session, p) => this.budget.ask(session.info.id, p),
    observed: async (session, p) => {
      if (this.catalogs.observed(session, p)) {
        await this.sessions.push((s) => s.info.server === session.info.server && s !== session);
      }
      return { ok: true as const };
    },
  };

  /** Call one user method by name with unchecked params: how a host with no socket (the app) reaches the API. */
  callUser(method: string, params: unknown, channel: Channel | null = null): unknown {
    if (!Object.hasOwn(userApi, method)) {
      if (Object.hasOwn(wrapperApi, method)) throw new IpcError('forbidden', `${method} is for wrappers, not for a front end`);
      throw new IpcError('unknown-method', `unknown method ${method}`);
    }
    const m = method as UserMethodKey;
    const parsed = userApi[m].params.safeParse(params ?? {});
    if (!parsed.success) throw bad(`${method}: ${schemaMessage(parsed.error)}`);
    return (this.userHandlers[m] as (p: unknown, c: Channel | null) => unknown)(parsed.data, channel);
  }

  /** Take over an authenticated connection; what it may call depends on its role. */
  attach(channel: Channel, role: Role): void {
    let session: Session | null = null;
    const subscriptions = new Set<string>();
    this.channels.add(channel);
    channel.setHandlers({
      request: (method, params) => this.safety.translate(() => {
        if (role !== 'wrapper') {
          const out = this.callUser(method, params, channel);
          if (method === 'events.subscribe') void Promise.resolve(out).then((r) => subscriptions.add((r as { subscription: string }).subscription));
          return out;
        }
        if (!Object.hasOwn(wrapperApi, method)) {
          if (Object.hasOwn(userApi, method)) throw new IpcError('forbidden', `${method} is for a person's front end, not for a wrapper`);
          throw new IpcError('unknown-method', `unknown method ${method}`);
        }
        const m = method as WrapperMethodKey;
        const parsed = wrapperApi[m].params.safeParse(params ?? {});
        if (!parsed.success) throw bad(`${method}: ${schemaMessage(parsed.error)}`);
        if (m === 'session.open') {
          if (session) throw bad('session already open');
          session = this.openSession(channel, parsed.data as WrapperParamsOf<'session.open'>);
          return { sessionId: session.info.id, policy: this.snapshot(session), ticketTimeoutSeconds: this.ticketTimeout.seconds };
        }
        if (!session) throw new IpcError('no-session', 'open a session first');
        return (this.wrapperHandlers[m] as (s: Session, p: unknown) => unknown)(session, parsed.data);
      }),
      notify: (method, params) => {
        // a heartbeat: a peer that stops hearing pongs treats the broker as down (and fails closed)
        if (method === PING) return void channel.notify(BrokerNote.pong, isObject(params) ? { n: params.n } : {});
        if (!session) return;
        if (method === WrapperNote.policyAck) this.sessions.onAck(session, isObject(params) && typeof params.version === 'number' ? params.version : 0);
        else if (method === WrapperNote.cancel) {
          if (isObject(params) && typeof params.callId === 'string') this.tickets.cancel(session, params.callId);
        } else if (method === WrapperNote.structured) this.catalogs.structured(session, params);
        else if (method === WrapperNote.budgetReport && isObject(params)) this.budget.report(session.info.id, placeCount(params.used), placeCount(params.returned));
      },
      close: () => {
        this.channels.delete(channel);
        for (const id of subscriptions) this.bus.unsubscribe(id);
        if (session) this.closeSession(session);
      },
    });
  }

  private subscribeChannel(channel: Channel, since: number): { subscription: string; head: number } {
    return this.subscribe(since, {
      send: (event) => {
        if (channel.socket.writableLength > MAX_SUBSCRIBER_BACKLOG) return false;
        return channel.write({ t: 'note', m: BrokerNote.event, p: event });
      },
      ended: (reason) => channel.notify(BrokerNote.event, { ended: reason }),
    });
  }

  // ---- sessions and policy -------------------------------------------------------------------------------

  private openSession(channel: Channel, p: WrapperParamsOf<'session.open'>): Session {
    const session = this.sessions.open(channel, p);
    this.safety.disk.write(() => this.store.openSession(session.info));
    this.fileTools.noteSession(session.info.server, session.info.command);
    this.undo.sessionOpened(session, p.undo);
    this.record('session-up', session.info.server, null, { session: session.info });
    // loosening flags of the wrapper count only as the person's recorded choice (`airlock trust`, `airlock inverses`)
    const flags = [...(p.trustFlag && !this.store.trusts(session.info.server) ? ['--trust-read-only-hints'] : []), ...this.undo.inverses.undeclaredFlags(session.info.id)];
    if (flags.length) {
      const reason = `not applied: the person has not chosen them (\`airlock trust ${session.info.server} on\`, \`airlock inverses\`); the session runs without them`;
      this.record('wrap-flags-ignored', session.info.server, null, { client: session.info.client, flags, reason });
    }
    return session;
  }

  private closeSession(session: Session): void {
    this.sessions.close(session);
    this.budget.closed(session.info.id);
    this.undo.sessionClosed(session);
    this.pins.forget(session);
    this.safety.disk.write(() => this.store.endSession(session.info.id));
    this.tickets.denyAll((t) => t.session === session, 'cancelled', 'the wrapper went away', 'abandoned');
    this.record('session-down', session.info.server, null, { sessionId: session.info.id, client: session.info.client });
  }

  private snapshot(session: Session): PolicySnapshot {
    return {
      version: this.sessions.version,
      estop: this.estop,
      rules: rulesForSession(this.rulesCache, session.info.server, session.info.client),
      sessionAllows: [...session.sessionAllows],
      trustReadOnlyHints: this.store.trusts(session.info.server),
      // a declared inverse is evidence against a read-only claim, like an observed contradiction
      withdrawn: { ...this.undo.evidence(session), ...this.store.withdrawn(session.info.server) },
      ticketTimeoutSeconds: this.ticketTimeout.seconds,
      estopGraceSeconds: Number(settingOrFallback('estop-grace-seconds', this.store.getSetting('estop-grace-seconds'))),
      pins: this.pins.forServer(session.info.server),
      fileTools: this.undo.snapshotTools(session),
      inverseTools: this.undo.inverseTools(session),
      ...(this.safety.disk.full ? { journalDown: DISK_FULL_REASON } : {}),
      tripwire: this.tripwireLimits.on,
    };
  }

  /** Count a journal batch's changing calls; past the limit, E-Stop engages and the event says why. */
  private watchTripwire(session: Session, entries: readonly unknown[]): void {
    if (this.estop) return;
    const reason = this.tripwire.observe(session.info.id, entries, this.tripwireLimits);
    if (reason !== null) void this.setEstop(true, { by: 'tripwire', reason });
  }

  private insertRule(r: Omit<Rule, 'id' | 'createdAt'>): Rule {
    const rule: Rule = { ...r, id: `r${randomBytes(3).toString('hex')}`, createdAt: this.clock.now() };
    this.store.addRule(rule);
    this.rulesCache = this.store.rules();
    this.record('rule-added', null, null, rule);
    return rule;
  }

  private ask(session: Session, p: WrapperParamsOf<'call.ask'>): Promise<AskAnswer> {
    if (this.estop) {
      return Promise.resolve({ decision: 'deny', decidedBy: 'estop', ticketId: newTicketId(), reason: 'E-Stop is on' });
    }
    if (this.safety.disk.full) return Promise.resolve({ decision: 'deny', decidedBy: 'error', ticketId: newTicketId(), reason: DISK_FULL_REASON });
    return this.tickets.ask(session, p);
  }

  // ---- lifecycle -----------------------------------------------------------------------------------------

  /** Every open connection (wrappers, CLIs, UIs). */
  connections(): Channel[] {
    return [...this.channels];
  }

  /** Fail every pending ticket closed and write what is queued (the broker is going away). */
  shutdown(): void {
    this.inspections.stopAll();
    this.tickets.denyAll(() => true, 'broker-down', 'Airlock is shutting down', 'broker-shutdown');
    this.journalWriter.flush();
    this.safety.stop();
    this.bus.close('the broker is stopping');
  }
}

/** A rule glob that matches exactly this name; a name it cannot spell exactly is refused, not widened. */
function exactName(name: string): string {
  try {
    return literalGlob(name);
  } catch (err) {
    throw bad((err as Error).message);
  }
}

/** A count of tripwire places in a wrapper's note (anything else is none). */
function placeCount(v: unknown): number {
  return typeof v === 'number' && Number.isSafeInteger(v) && v > 0 ? v : 0;
}

/** The stored cause of an E-Stop; null when it cannot be read (the switch itself still holds). */
function readEstopCause(stored: string | undefined): EstopCause | null {
  if (!stored) return null;
  const parsed = EstopCauseSchema.safeParse(parseJson(stored));
  return parsed.success ? parsed.data : null;
}
