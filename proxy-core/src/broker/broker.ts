/**
 * The broker: one per user. Holds sessions, tickets, rules, E-Stop and the journal, and pushes each wrapper
 * the policy it needs to decide allowed calls itself. A change that tightens (E-Stop, a deny rule) is not
 * reported done until every connected wrapper has applied it, so "the very next call" sees it.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { EventEmitter } from 'node:events';
import type { Verdict } from '../classify/classify.js';
import { type Channel, IpcError } from '../ipc/channel.js';
import type { Role } from '../ipc/connect.js';
import type {
  AskAnswer,
  BrokerStatus,
  JournalEntry,
  Remember,
  SessionInfo,
  Ticket,
} from '../ipc/protocol.js';
import { isObject } from '../jsonrpc/messages.js';
import type { PolicySnapshot } from '../policy/decide.js';
import { literalGlob } from '../policy/glob.js';
import { RULE_ACTIONS, type Rule, type RuleAction, rulesForSession } from '../policy/rules.js';
import type { Store } from './store.js';
import { bad, bool, checkEntry, obj, optStr, parseRemember, settingKey, str, strings, ticketArguments, toolClass, USER_SETTINGS } from './validate.js';

interface Session {
  info: SessionInfo;
  channel: Channel;
  trustFlag: boolean;
  sessionAllows: Set<string>;
  acked: number;
  ackWaiters: { version: number; resolve: () => void }[];
  /** Output schemas from the last catalog, for checking structuredContent on live traffic. */
  outputSchemas: Map<string, unknown>;
}

interface OpenTicket {
  ticket: Ticket;
  session: Session;
  callId: string;
  finish: (answer: AskAnswer) => void;
  timer: NodeJS.Timeout;
}

export interface BrokerOptions {
  store: Store;
  dataDir: string;
  ticketTimeoutSeconds: number;
  /** How long a wrapper may take to apply a policy push before it is cut off (and so fails closed). */
  ackTimeoutMs?: number;
}


export function newTicketId(): string {
  return randomBytes(4).toString('hex');
}

export class Broker extends EventEmitter {
  private readonly store: Store;
  private readonly sessions = new Map<string, Session>();
  private readonly tickets = new Map<string, OpenTicket>();
  private readonly channels = new Set<Channel>();
  /** Last catalog seen per server, so reconnecting wrappers do not journal the same classification again. */
  private readonly catalogs = new Map<string, string>();
  private rules: Rule[];
  private estop: boolean;
  private version = 1;
  private readonly ackTimeoutMs: number;
  private journalQueue: { entries: JournalEntry[]; done: (err?: Error) => void }[] = [];
  private journalScheduled = false;
  private outputSchemaCheck: ((schema: unknown, value: unknown) => { ok: true } | { ok: false; errors: string[] }) | null = null;

  constructor(readonly options: BrokerOptions) {
    super();
    this.store = options.store;
    this.ackTimeoutMs = options.ackTimeoutMs ?? 1500;
    this.rules = this.store.rules();
    this.estop = this.store.getSetting('estop') === 'on';
    this.store.endAllSessions();
    const orphans = this.store.closeOrphanTickets();
    if (orphans > 0) this.store.addEvent('broker-restart', null, null, { orphanTickets: orphans });
  }

  /** Let a validator for tool output schemas plug in (kept optional so the broker core has no schema library). */
  setOutputSchemaCheck(check: (schema: unknown, value: unknown) => { ok: true } | { ok: false; errors: string[] }): void {
    this.outputSchemaCheck = check;
  }

  // ---- connections -------------------------------------------------------------------------------------

  /** Take over an authenticated connection. */
  attach(channel: Channel, role: Role): void {
    let session: Session | null = null;
    this.channels.add(channel);
    channel.setHandlers({
      request: (method, params) => {
        if (role === 'wrapper') {
          if (method === 'session.open') {
            if (session) throw bad('session already open');
            session = this.openSession(channel, params);
            return { sessionId: session.info.id, policy: this.snapshot(session), ticketTimeoutSeconds: this.options.ticketTimeoutSeconds };
          }
          if (!session) throw new IpcError('no-session', 'open a session first');
          return this.wrapperRequest(session, method, params);
        }
        return this.controlRequest(method, params);
      },
      notify: (method, params) => {
        // a heartbeat: a peer that stops hearing pongs treats the broker as down (and fails closed)
        if (method === 'ping') return void channel.notify('pong', isObject(params) ? { n: params.n } : {});
        if (!session) return;
        if (method === 'policy.ack') this.onAck(session, params);
        else if (method === 'call.cancel') this.onCancel(session, params);
        else if (method === 'structured') this.onStructured(session, params);
      },
      close: () => {
        this.channels.delete(channel);
        if (session) this.closeSession(session);
      },
    });
  }

  private wrapperRequest(session: Session, method: string, params: unknown): unknown {
    switch (method) {
      case 'call.ask':
        return this.ask(session, params);
      case 'journal':
        return this.journal(session, params);
      case 'catalog.update':
        return this.catalogUpdate(session, params);
      case 'observed':
        return this.observed(session, params);
      default:
        throw new IpcError('unknown-method', `unknown method ${method}`);
    }
  }

  /** Requests from the CLI and the UIs. */
  controlRequest(method: string, params: unknown): unknown {
    const p = isObject(params) ? params : {};
    switch (method) {
      case 'status':
        return this.status();
      case 'pending':
        return this.pending();
      case 'approve':
        return this.approve(str(p, 'id', 64), parseRemember(p.remember));
      case 'deny':
        return this.deny(str(p, 'id', 64), optStr(p, 'reason', 2000));
      case 'estop':
        return this.setEstop(bool(p, 'on'));
      case 'history': {
        const limit = typeof p.limit === 'number' && Number.isInteger(p.limit) && p.limit > 0 ? Math.min(p.limit, 10_000) : 50;
        const server = optStr(p, 'server', 512) ?? null;
        return { calls: this.store.history(limit, server), events: this.store.events(limit, server) };
      }
      case 'rules.list':
        return this.rules;
      case 'rules.add':
        return this.addRule(p);
      case 'rules.remove':
        return this.removeRule(str(p, 'id', 64));
      case 'trust.set':
        return this.setTrust(str(p, 'server', 512), bool(p, 'on'));
      case 'trust.list':
        return this.store.trustedServers();
      case 'catalog':
        return this.store.catalog(str(p, 'server', 512));
      case 'settings.get':
        return { value: this.store.getSetting(settingKey(p)) ?? null };
      case 'settings.set': {
        const key = settingKey(p);
        const value = str(p, 'value', 16);
        if (!USER_SETTINGS[key]!.includes(value)) throw bad(`${key} takes ${USER_SETTINGS[key]!.join(' or ')}`);
        this.store.setSetting(key, value);
        this.store.addEvent('setting-changed', null, null, { key, value });
        return { ok: true };
      }
      default:
        throw new IpcError('unknown-method', `unknown method ${method}`);
    }
  }

  // ---- sessions and policy pushes ----------------------------------------------------------------------

  private openSession(channel: Channel, params: unknown): Session {
    const p = obj(params, 'session.open params');
    const command = strings(p.command, 1000);
    const info: SessionInfo = {
      id: randomUUID(),
      client: str(p, 'client', 256),
      server: str(p, 'server', 512),
      command,
      pid: typeof p.pid === 'number' ? p.pid : 0,
      since: Date.now(),
    };
    const session: Session = {
      info,
      channel,
      trustFlag: p.trustFlag === true,
      sessionAllows: new Set(),
      acked: this.version,
      ackWaiters: [],
      outputSchemas: new Map(),
    };
    this.sessions.set(info.id, session);
    this.store.openSession(info);
    this.emit('sessions');
    return session;
  }

  private closeSession(session: Session): void {
    this.sessions.delete(session.info.id);
    this.store.endSession(session.info.id);
    for (const t of [...this.tickets.values()]) {
      if (t.session === session) this.endTicket(t, { decision: 'deny', decidedBy: 'cancelled', ticketId: t.ticket.id, reason: 'the wrapper went away' }, 'abandoned', null);
    }
    for (const w of session.ackWaiters) w.resolve();
    session.ackWaiters = [];
    this.emit('sessions');
  }

  snapshot(session: Session): PolicySnapshot {
    return {
      version: this.version,
      estop: this.estop,
      rules: rulesForSession(this.rules, session.info.server, session.info.client),
      sessionAllows: [...session.sessionAllows],
      trustReadOnlyHints: this.store.trusts(session.info.server),
      withdrawn: this.store.withdrawn(session.info.server),
    };
  }

  /** Push fresh policy to the given sessions (default all) and wait until each applied it or was cut off. */
  private push(only?: (s: Session) => boolean): Promise<void> {
    this.version++;
    const version = this.version;
    const waits: Promise<void>[] = [];
    for (const session of this.sessions.values()) {
      if (only && !only(session)) continue;
      const wait = new Promise<void>((resolve) => {
        session.ackWaiters.push({ version, resolve });
      });
      const timer = setTimeout(() => {
        // A wrapper that cannot confirm the new policy might still act on the old one: cut it off, so it
        // fails closed until it reconnects and gets the current policy.
        if (session.acked < version) session.channel.destroy(new IpcError('ack-timeout', 'policy not acknowledged'));
      }, this.ackTimeoutMs);
      timer.unref();
      waits.push(wait.finally(() => clearTimeout(timer)));
      session.channel.notify('policy', this.snapshot(session));
    }
    return Promise.all(waits).then(() => undefined);
  }

  private onAck(session: Session, params: unknown): void {
    const version = isObject(params) && typeof params.version === 'number' ? params.version : 0;
    if (version > session.acked) session.acked = version;
    const still: Session['ackWaiters'] = [];
    for (const w of session.ackWaiters) (w.version <= session.acked ? w.resolve : () => still.push(w))();
    session.ackWaiters = still;
  }

  // ---- tickets -----------------------------------------------------------------------------------------

  private ask(session: Session, params: unknown): Promise<AskAnswer> {
    const p = obj(params, 'call.ask params');
    const callId = str(p, 'callId', 256);
    const tool = str(p, 'tool', 1024);
    const ticket: Ticket = {
      id: newTicketId(),
      sessionId: session.info.id,
      client: session.info.client,
      server: session.info.server,
      tool,
      ...ticketArguments(p),
      class: toolClass(p.class),
      reasons: strings(p.reasons),
      createdAt: Date.now(),
    };
    if (this.estop) {
      return Promise.resolve({ decision: 'deny', decidedBy: 'estop', ticketId: ticket.id, reason: 'E-Stop is on' });
    }
    this.store.insertTicket(ticket);
    return new Promise<AskAnswer>((resolve) => {
      const timer = setTimeout(() => {
        const open = this.tickets.get(ticket.id);
        if (open) {
          this.endTicket(open, { decision: 'deny', decidedBy: 'timeout', ticketId: ticket.id, reason: `nobody answered within ${this.options.ticketTimeoutSeconds} s` }, 'timeout', null);
        }
      }, this.options.ticketTimeoutSeconds * 1000);
      timer.unref();
      this.tickets.set(ticket.id, { ticket, session, callId, finish: resolve, timer });
      session.channel.notify('ticket', { callId, ticketId: ticket.id });
      this.emit('ticket', ticket);
    });
  }

  private endTicket(open: OpenTicket, answer: AskAnswer, resolution: string, remember: Remember | null): void {
    if (!this.tickets.delete(open.ticket.id)) return;
    clearTimeout(open.timer);
    this.store.endTicket(open.ticket.id, resolution, remember, answer.reason);
    open.finish(answer);
    this.emit('ticket-ended', { id: open.ticket.id, resolution });
  }

  private onCancel(session: Session, params: unknown): void {
    const callId = isObject(params) && typeof params.callId === 'string' ? params.callId : null;
    for (const t of this.tickets.values()) {
      if (t.session === session && t.callId === callId) {
        this.endTicket(t, { decision: 'deny', decidedBy: 'cancelled', ticketId: t.ticket.id, reason: 'the client cancelled the call' }, 'cancelled', null);
      }
    }
  }

  pending(): Ticket[] {
    return [...this.tickets.values()].map((t) => t.ticket).sort((a, b) => a.createdAt - b.createdAt);
  }

  async approve(id: string, remember: Remember): Promise<{ ok: true; ticket: Ticket; remember: Remember }> {
    const open = this.requireTicket(id);
    const { session, ticket } = open;
    if (remember === 'session') {
      session.sessionAllows.add(ticket.tool);
      await this.push((s) => s === session);
    } else if (remember === 'always') {
      this.insertRule({ action: 'allow', server: literalGlob(ticket.server), tool: literalGlob(ticket.tool), note: `from ticket ${ticket.id}` });
      await this.push();
    }
    // E-Stop may have been pressed while the push was in flight; it wins.
    if (!this.tickets.has(id)) throw new IpcError('not-pending', `ticket ${id} ended while it was being approved`);
    this.endTicket(open, { decision: 'allow', decidedBy: 'user', ticketId: id, reason: 'approved by you', remember }, 'approved', remember);
    return { ok: true, ticket, remember };
  }

  deny(id: string, reason?: string): { ok: true; ticket: Ticket } {
    const open = this.requireTicket(id);
    const text = reason ? `denied by you: ${reason}` : 'denied by you';
    this.endTicket(open, { decision: 'deny', decidedBy: 'user', ticketId: id, reason: text }, 'denied', null);
    return { ok: true, ticket: open.ticket };
  }

  private requireTicket(id: string): OpenTicket {
    const open = this.tickets.get(id);
    if (!open) throw new IpcError('not-pending', `no pending ticket ${id} (see \`airlock pending\`)`);
    return open;
  }

  // ---- E-Stop, rules, trust ----------------------------------------------------------------------------

  async setEstop(on: boolean): Promise<{ estop: boolean }> {
    this.estop = on;
    this.store.setSetting('estop', on ? 'on' : 'off');
    this.store.addEvent(on ? 'estop-on' : 'estop-off', null, null, {});
    if (on) {
      for (const t of [...this.tickets.values()]) {
        this.endTicket(t, { decision: 'deny', decidedBy: 'estop', ticketId: t.ticket.id, reason: 'E-Stop was pressed' }, 'estop', null);
      }
    }
    this.emit('estop', on);
    await this.push();
    return { estop: on };
  }

  private insertRule(r: Omit<Rule, 'id' | 'createdAt'>): Rule {
    const rule: Rule = { ...r, id: `r${randomBytes(3).toString('hex')}`, createdAt: Date.now() };
    this.store.addRule(rule);
    this.rules = this.store.rules();
    this.store.addEvent('rule-added', null, null, rule);
    this.emit('rules');
    return rule;
  }

  private async addRule(p: Record<string, unknown>): Promise<Rule> {
    const action = p.action;
    if (typeof action !== 'string' || !RULE_ACTIONS.includes(action as RuleAction)) throw bad('action must be allow, deny or ask');
    const rule = this.insertRule({
      action: action as RuleAction,
      server: str(p, 'server', 512),
      tool: str(p, 'tool', 1024),
      ...(optStr(p, 'client', 256) !== undefined ? { client: optStr(p, 'client', 256)! } : {}),
    });
    await this.push();
    return rule;
  }

  private async removeRule(id: string): Promise<{ ok: true }> {
    if (!this.store.removeRule(id)) throw new IpcError('not-found', `no rule ${id} (see \`airlock rules\`)`);
    this.rules = this.store.rules();
    this.store.addEvent('rule-removed', null, null, { id });
    this.emit('rules');
    await this.push();
    return { ok: true };
  }

  private async setTrust(server: string, on: boolean): Promise<{ server: string; trust: boolean }> {
    this.store.setTrust(server, on);
    this.store.addEvent(on ? 'trust-on' : 'trust-off', server, null, {});
    await this.push((s) => s.info.server === server);
    return { server, trust: on };
  }

  status(): BrokerStatus {
    return {
      estop: this.estop,
      pending: this.tickets.size,
      sessions: [...this.sessions.values()].map((s) => s.info),
      dataDir: this.options.dataDir,
      pid: process.pid,
      ticketTimeoutSeconds: this.options.ticketTimeoutSeconds,
    };
  }

  // ---- journal, catalog, observations ------------------------------------------------------------------

  /** Coalesce journal batches from every wrapper into one transaction per tick; ack after the commit. */
  private journal(session: Session, params: unknown): Promise<{ acked: number }> {
    const p = obj(params, 'journal params');
    if (!Array.isArray(p.entries)) throw bad('entries must be an array');
    const entries = p.entries.map((e) => checkEntry(session, e));
    return new Promise((resolve, reject) => {
      this.journalQueue.push({ entries, done: (err) => (err ? reject(err) : resolve({ acked: entries.length })) });
      if (!this.journalScheduled) {
        this.journalScheduled = true;
        setImmediate(() => this.flushJournal());
      }
    });
  }

  private flushJournal(): void {
    this.journalScheduled = false;
    const queue = this.journalQueue;
    this.journalQueue = [];
    try {
      this.store.writeJournal(queue.flatMap((q) => q.entries));
      for (const q of queue) q.done();
      this.emit('journal');
    } catch (err) {
      // not acked: the wrappers keep the entries and send them again
      const e = new IpcError('journal-failed', `journal write failed: ${(err as Error).message}`);
      for (const q of queue) q.done(e);
    }
  }

  private catalogUpdate(session: Session, params: unknown): { ok: true } {
    const p = obj(params, 'catalog.update params');
    const verdicts: Verdict[] = [];
    const schemas = new Map<string, unknown>();
    for (const v of Array.isArray(p.verdicts) ? p.verdicts : []) {
      if (!isObject(v) || typeof v.name !== 'string') continue;
      verdicts.push({ name: v.name.slice(0, 1024), class: toolClass(v.class), reasons: strings(v.reasons), declared: v.declared });
      if (v.outputSchema !== undefined) schemas.set(v.name, v.outputSchema);
    }
    session.outputSchemas = schemas;
    const fingerprint = JSON.stringify(verdicts);
    const server = session.info.server;
    if (!this.catalogs.has(server)) this.catalogs.set(server, JSON.stringify(this.store.catalog(server)));
    if (fingerprint !== this.catalogs.get(server)) {
      this.catalogs.set(server, fingerprint);
      this.store.replaceCatalog(session.info.server, verdicts);
      const byClass: Record<string, number> = {};
      for (const v of verdicts) byClass[v.class] = (byClass[v.class] ?? 0) + 1;
      this.store.addEvent('classified', session.info.server, null, { tools: verdicts.length, byClass, problems: strings(p.problems) });
      this.emit('catalog', session.info.server);
    }
    return { ok: true };
  }

  private async observed(session: Session, params: unknown): Promise<{ ok: true }> {
    const p = obj(params, 'observed params');
    let changed = false;
    for (const c of Array.isArray(p.contradictions) ? p.contradictions : []) {
      if (!isObject(c) || typeof c.tool !== 'string' || typeof c.evidence !== 'string') continue;
      const evidence = c.evidence.slice(0, 2000);
      if (this.store.withdrawClaim(session.info.server, c.tool, evidence)) {
        changed = true;
        this.store.addEvent('read-only-claim-withdrawn', session.info.server, c.tool, { evidence, client: session.info.client });
      }
    }
    if (changed) {
      this.emit('catalog', session.info.server);
      await this.push((s) => s.info.server === session.info.server && s !== session);
    }
    return { ok: true };
  }

  private onStructured(session: Session, params: unknown): void {
    if (!this.outputSchemaCheck || !isObject(params) || typeof params.tool !== 'string') return;
    const schema = session.outputSchemas.get(params.tool);
    if (schema === undefined) return;
    const result = this.outputSchemaCheck(schema, params.structuredContent);
    if (!result.ok) {
      this.store.addEvent('output-schema-mismatch', session.info.server, params.tool, { errors: result.errors.slice(0, 20), client: session.info.client });
    }
  }

  /** Every open connection (wrappers, CLIs, UIs). */
  connections(): Channel[] {
    return [...this.channels];
  }

  /** Stop timers and fail every pending ticket closed (the broker is going away). */
  shutdown(): void {
    for (const t of [...this.tickets.values()]) {
      this.endTicket(t, { decision: 'deny', decidedBy: 'broker-down', ticketId: t.ticket.id, reason: 'Airlock is shutting down' }, 'broker-shutdown', null);
    }
    if (this.journalQueue.length) this.flushJournal();
  }
}
