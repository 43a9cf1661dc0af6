/**
 * The broker: one per user. A facade over its parts — sessions and policy pushes (sessions.ts), tickets
 * (tickets.ts), server catalogs and observations (catalogs.ts), the journal writer (journal-writer.ts) and the
 * event stream (events.ts) — with one typed API that the CLI and UIs reach over the socket through the
 * protocol's schemas (protocol/api.ts), and that an in-process host can call directly.
 *
 * A change that tightens (E-Stop, a deny rule) is not reported done until every connected wrapper has applied
 * it, so "the very next call" sees it.
 */
import { randomBytes } from 'node:crypto';
import { type Channel, IpcError } from '../ipc/channel.js';
import { isObject } from '../jsonrpc/messages.js';
import type { PolicySnapshot } from '../policy/decide.js';
import { literalGlob } from '../policy/glob.js';
import { type Rule, rulesForSession } from '../policy/rules.js';
import {
  type AskAnswer,
  type BrokerEvent,
  type BrokerStatus,
  type CheckedParamsOf,
  type Remember,
  type ResultOf,
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
import { type Clock, systemClock } from '../util/clock.js';
import { ServerCatalogs, type OutputSchemaCheck } from './catalogs.js';
import { EventBus, type Subscriber } from './events.js';
import { JournalWriter } from './journal-writer.js';
import { type Session, Sessions } from './sessions.js';
import type { Store } from './store.js';
import { newTicketId, Tickets } from './tickets.js';
import { bad, checkSetting, schemaMessage } from './validate.js';

export interface BrokerOptions {
  store: Store;
  dataDir: string;
  ticketTimeoutSeconds: number;
  /** How long a wrapper may take to apply a policy push before it is cut off (and so fails closed). */
  ackTimeoutMs?: number;
  clock?: Clock;
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
  private readonly channels = new Set<Channel>();
  private rulesCache: Rule[];
  private estop: boolean;

  constructor(readonly options: BrokerOptions) {
    this.store = options.store;
    this.clock = options.clock ?? systemClock;
    this.bus = new EventBus(this.store);
    const record = this.record.bind(this);
    this.sessions = new Sessions({ clock: this.clock, ackTimeoutMs: options.ackTimeoutMs ?? 1500, snapshot: (s) => this.snapshot(s) });
    this.tickets = new Tickets({ store: this.store, clock: this.clock, timeoutSeconds: options.ticketTimeoutSeconds, record });
    this.catalogs = new ServerCatalogs({ store: this.store, record });
    this.journalWriter = new JournalWriter(this.store, (events) => this.bus.publish(events), (error, client) => this.record('journal-entry-refused', null, null, { error, client }));
    this.rulesCache = this.store.rules();
    this.estop = this.store.getSetting('estop') === 'on';
    this.store.endAllSessions();
    const orphans = this.store.closeOrphanTickets();
    if (orphans > 0) this.record('broker-restart', null, null, { orphanTickets: orphans });
  }

  /** Store an event and publish it to subscribers. */
  record<K extends EventType>(type: K, server: string | null, tool: string | null, detail: EventDetails[K]): BrokerEvent {
    const event = this.store.addEvent(type, server, tool, detail);
    this.bus.publish([event]);
    return event;
  }

  setOutputSchemaCheck(check: OutputSchemaCheck): void {
    this.catalogs.setOutputSchemaCheck(check);
  }

  // ---- the typed API (what front ends call) --------------------------------------------------------------

  status(): BrokerStatus {
    return {
      estop: this.estop,
      pending: this.tickets.size,
      sessions: this.sessions.all().map((s) => s.info),
      dataDir: this.options.dataDir,
      pid: process.pid,
      ticketTimeoutSeconds: this.options.ticketTimeoutSeconds,
    };
  }

  pending(): Ticket[] {
    return this.tickets.pending();
  }

  async approve(id: string, remember: Remember = 'once'): Promise<{ ok: true; ticket: Ticket; remember: Remember }> {
    const open = this.tickets.require(id);
    const { session, ticket } = open;
    if (remember === 'session') {
      session.sessionAllows.add(ticket.tool);
      await this.sessions.push((s) => s === session);
    } else if (remember === 'always') {
      this.insertRule({ action: 'allow', server: literalGlob(ticket.server), tool: literalGlob(ticket.tool), note: `from ticket ${ticket.id}` });
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

  async setEstop(on: boolean): Promise<{ estop: boolean }> {
    this.estop = on;
    this.store.setSetting('estop', on ? 'on' : 'off');
    this.record(on ? 'estop-on' : 'estop-off', null, null, {});
    if (on) this.tickets.denyAll(() => true, 'estop', 'E-Stop was pressed', 'estop');
    await this.sessions.push();
    return { estop: on };
  }

  history(q: CheckedParamsOf<'history'>): ResultOf<'history'> {
    return this.store.history(q);
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
    const rule = this.insertRule({
      action: p.action,
      server: p.server,
      tool: p.tool,
      ...(p.client !== undefined ? { client: p.client } : {}),
      ...(p.args?.length ? { args: p.args } : {}),
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

  catalog(server: string): ResultOf<'catalog'> {
    return this.store.catalog(server);
  }

  getSetting(key: string): { value: string | null } {
    checkSetting(key);
    return { value: this.store.getSetting(key) ?? null };
  }

  setSetting(key: string, value: string): { ok: true } {
    checkSetting(key, value);
    this.store.setSetting(key, value);
    this.record('setting-changed', null, null, { key, value });
    return { ok: true };
  }

  /** Ask one connected wrapper something through its own connection. */
  async requestWrapper(sessionId: string, method: typeof BrokerToWrapper.status): Promise<{ sessionId: string; answer: unknown }> {
    return { sessionId, answer: await this.sessions.request(sessionId, method, {}) };
  }

  // ---- connections ---------------------------------------------------------------------------------------

  private readonly userHandlers: UserHandlers = {
    status: () => this.status(),
    pending: () => this.pending(),
    approve: (p) => this.approve(p.id, p.remember),
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
  };

  private readonly wrapperHandlers: WrapperHandlers = {
    'call.ask': (session, p) => this.ask(session, p),
    journal: (session, p) => this.journalWriter.write(session, p.entries),
    'catalog.update': (session, p) => {
      this.catalogs.update(session, p);
      return { ok: true as const };
    },
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
      request: (method, params) => {
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
          return { sessionId: session.info.id, policy: this.snapshot(session), ticketTimeoutSeconds: this.options.ticketTimeoutSeconds };
        }
        if (!session) throw new IpcError('no-session', 'open a session first');
        return (this.wrapperHandlers[m] as (s: Session, p: unknown) => unknown)(session, parsed.data);
      },
      notify: (method, params) => {
        // a heartbeat: a peer that stops hearing pongs treats the broker as down (and fails closed)
        if (method === PING) return void channel.notify(BrokerNote.pong, isObject(params) ? { n: params.n } : {});
        if (!session) return;
        if (method === WrapperNote.policyAck) this.sessions.onAck(session, isObject(params) && typeof params.version === 'number' ? params.version : 0);
        else if (method === WrapperNote.cancel) {
          if (isObject(params) && typeof params.callId === 'string') this.tickets.cancel(session, params.callId);
        } else if (method === WrapperNote.structured) this.catalogs.structured(session, params);
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
    this.store.openSession(session.info);
    this.record('session-up', session.info.server, null, { session: session.info });
    return session;
  }

  private closeSession(session: Session): void {
    this.sessions.close(session);
    this.store.endSession(session.info.id);
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
      withdrawn: this.store.withdrawn(session.info.server),
    };
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
    return this.tickets.ask(session, p);
  }

  // ---- lifecycle -----------------------------------------------------------------------------------------

  /** Every open connection (wrappers, CLIs, UIs). */
  connections(): Channel[] {
    return [...this.channels];
  }

  /** Fail every pending ticket closed and write what is queued (the broker is going away). */
  shutdown(): void {
    this.tickets.denyAll(() => true, 'broker-down', 'Airlock is shutting down', 'broker-shutdown');
    this.journalWriter.flush();
    this.bus.close('the broker is stopping');
  }
}
