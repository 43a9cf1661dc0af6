/**
 * Tickets: calls held for a human. Each ends exactly once (answered, timed out, cancelled, E-Stop, wrapper
 * gone, broker stopping), and ending one answers the wrapper that asked and is recorded.
 */
import { randomBytes } from 'node:crypto';
import { IpcError } from '../../ipc/channel.js';
import type { AskAnswer, AskRequest, Remember, Ticket } from '../../protocol/api.js';
import type { EventDetails } from '../../protocol/events.js';
import { BrokerNote } from '../../protocol/names.js';
import type { Clock, Timer } from '../../util/clock.js';
import type { Session } from '../sessions.js';
import { isDiskError } from '../db/files.js';
import type { Store } from '../db/store.js';
import { strings, ticketArguments, toolClass } from '../validate.js';
import { isSameCall, KeptDecisions, sameCallOf } from './kept.js';

export interface OpenTicket {
  ticket: Ticket;
  session: Session;
  callId: string;
  finish: (answer: AskAnswer) => void;
  timer: Timer;
  /** The wrapper answered its call "still waiting": the ticket outlives the session (kept.ts). */
  kept?: boolean;
  /** Its session ended: nobody waits on it until the same call is made again. */
  orphaned?: boolean;
}

export interface TicketsOptions {
  store: Store;
  clock: Clock;
  /** The timeout for a ticket created now (a setting: it may change between tickets). */
  timeoutSeconds(): number;
  /** The narrower "always allow" scopes to offer for a held call (scopes.ts). */
  scopes?(session: Session, tool: string, args: unknown): Ticket['scopes'];
  /** How the tool's definition differs from its pin, when it does (pins.ts), with the reason to show first. */
  pinChange?(session: Session, tool: string): { change: NonNullable<Ticket['pinChange']>; reason: string } | undefined;
  /** Whether the call will be undoable if approved (undo/undo.ts). */
  undoable?(session: Session, tool: string, args: unknown): Ticket['undoable'];
  /** The tool's own description as listed (pins.ts). */
  description?(session: Session, tool: string): string | undefined;
  /** The call asking is an undo's inverse the broker sent (undo/inverse.ts): which call it undoes, and what to say first. */
  undoOf?(session: Session, callId: string, tool: string): { undoOf: string; reason: string } | undefined;
  record<K extends 'ticket-created' | 'ticket-ended' | 'ticket-unwaited'>(type: K, server: string | null, tool: string | null, detail: EventDetails[K]): void;
}

export function newTicketId(): string {
  return randomBytes(4).toString('hex');
}

export class Tickets {
  private readonly open = new Map<string, OpenTicket>();
  private readonly decided: KeptDecisions;

  constructor(private readonly o: TicketsOptions) {
    this.decided = new KeptDecisions(o.clock);
  }

  get size(): number {
    return this.open.size;
  }

  /** Hold a call for a human; resolves with the answer, whoever gives it. */
  ask(session: Session, p: AskRequest): Promise<AskAnswer> {
    const timeoutSeconds = this.o.timeoutSeconds();
    const createdAt = this.o.clock.now();
    const args = ticketArguments(p as unknown as Record<string, unknown>);
    const picked = this.pickUp(session, p, args.argsSha256);
    if (picked) return picked;
    const ticket: Ticket = {
      id: newTicketId(),
      sessionId: session.info.id,
      callId: p.callId,
      client: session.info.client,
      server: session.info.server,
      tool: p.tool,
      ...args,
      class: toolClass(p.class),
      reasons: strings(p.reasons),
      createdAt,
      expiresAt: createdAt + timeoutSeconds * 1000,
    };
    // from the arguments as kept: cut ones are not known, so they get no scope
    const scopes = ticket.argsTruncated ? undefined : this.o.scopes?.(session, ticket.tool, ticket.arguments);
    if (scopes?.length) ticket.scopes = scopes;
    if (this.o.undoable) ticket.undoable = this.o.undoable(session, ticket.tool, ticket.arguments) ?? null;
    const pin = this.o.pinChange?.(session, ticket.tool);
    if (pin) {
      ticket.pinChange = pin.change;
      ticket.reasons = [pin.reason, ...ticket.reasons];
    }
    const description = this.o.description?.(session, ticket.tool);
    if (description) ticket.description = description.length > 4000 ? `${description.slice(0, 3999)}…` : description;
    const undo = this.o.undoOf?.(session, p.callId, ticket.tool);
    if (undo) {
      ticket.undoOf = undo.undoOf;
      ticket.reasons = [undo.reason, ...ticket.reasons];
    }
    this.o.store.insertTicket(ticket);
    return new Promise<AskAnswer>((resolve) => {
      const timer = this.o.clock.setTimeout(() => {
        const open = this.open.get(ticket.id);
        const reason = `nobody answered within ${timeoutSeconds} s`;
        if (open) this.end(open, { decision: 'deny', decidedBy: 'timeout', ticketId: ticket.id, reason }, 'timeout', null);
      }, timeoutSeconds * 1000);
      this.open.set(ticket.id, { ticket, session, callId: p.callId, finish: resolve, timer });
      session.channel.notify(BrokerNote.ticket, { callId: p.callId, ticketId: ticket.id });
      this.o.record('ticket-created', ticket.server, ticket.tool, { ticket });
    });
  }

  /** End a ticket once: later attempts (a race between a human and a timeout) change nothing. */
  end(open: OpenTicket, answer: AskAnswer, resolution: string, remember: Remember | null): boolean {
    if (!this.open.delete(open.ticket.id)) return false;
    this.o.clock.clearTimeout(open.timer);
    try {
      this.o.store.endTicket(open.ticket.id, resolution, remember, answer.reason);
    } catch (err) {
      // ended in memory all the same (a row left open is closed at the next start); the event below says the disk is full
      if (!isDiskError(err)) throw err;
    }
    open.finish(answer);
    this.o.record('ticket-ended', open.ticket.server, open.ticket.tool, { ticketId: open.ticket.id, resolution, reason: answer.reason, remember });
    return true;
  }

  /** End every open ticket matching `which` as a denial. */
  denyAll(which: (t: OpenTicket) => boolean, decidedBy: AskAnswer['decidedBy'], reason: string, resolution: string): void {
    for (const t of [...this.open.values()]) {
      if (which(t)) this.end(t, { decision: 'deny', decidedBy, ticketId: t.ticket.id, reason }, resolution, null);
    }
  }

  /**
   * The wrapper answered this call "still waiting": the client stopped waiting (the card says so), and the ticket
   * stays open after the session ends.
   */
  keep(session: Session, callId: string): void {
    for (const t of this.open.values()) if (t.session === session && t.callId === callId) t.kept = true;
    this.unwaited(session, callId);
  }

  /**
   * A wrapper went away: the tickets it kept stay open, each for its own timeout, with their decision kept for
   * the same call made again (kept.ts); every other one of its tickets is denied.
   */
  sessionClosed(session: Session): void {
    for (const t of [...this.open.values()]) {
      if (t.session !== session) continue;
      if (!t.kept) {
        this.end(t, { decision: 'deny', decidedBy: 'cancelled', ticketId: t.ticket.id, reason: 'the wrapper went away' }, 'abandoned', null);
        continue;
      }
      t.orphaned = true;
      t.finish = (answer) => this.decided.add(t.ticket, answer, this.o.timeoutSeconds() * 1000);
    }
  }

  /**
   * The same call as a kept ticket's, made again from a new session: it takes the decision made meanwhile, or
   * waits on that ticket (the new session is told its id, and the person still sees one ticket).
   */
  private pickUp(session: Session, p: AskRequest, argsSha256: string): Promise<AskAnswer> | undefined {
    const call = { client: session.info.client, server: session.info.server, tool: p.tool, argsSha256 };
    const answer = this.decided.take(call);
    if (answer) return Promise.resolve({ ...answer, reason: `${answer.reason}; picked up by the same call made again after the earlier session ended` });
    const orphan = [...this.open.values()].find((t) => t.orphaned && isSameCall(sameCallOf(t.ticket), call));
    if (!orphan) return undefined;
    return new Promise<AskAnswer>((resolve) => {
      orphan.orphaned = false;
      orphan.kept = false;
      orphan.session = session;
      orphan.callId = p.callId;
      orphan.ticket = { ...orphan.ticket, sessionId: session.info.id, callId: p.callId };
      orphan.finish = resolve;
      session.channel.notify(BrokerNote.ticket, { callId: p.callId, ticketId: orphan.ticket.id });
    });
  }

  cancel(session: Session, callId: string): void {
    this.denyAll((t) => t.session === session && t.callId === callId, 'cancelled', 'the client cancelled the call', 'cancelled');
  }

  /** The client stopped waiting on this call (its wrapper answered "call again"): the ticket says so. */
  private unwaited(session: Session, callId: string): void {
    for (const t of this.open.values()) {
      if (t.session !== session || t.callId !== callId || t.ticket.unwaitedAt !== undefined) continue;
      t.ticket.unwaitedAt = this.o.clock.now();
      this.o.record('ticket-unwaited', t.ticket.server, t.ticket.tool, { ticketId: t.ticket.id, at: t.ticket.unwaitedAt });
    }
  }

  /** The held ticket with this id, or null. */
  get(id: string): Ticket | null {
    return this.open.get(id)?.ticket ?? null;
  }

  has(id: string): boolean {
    return this.open.has(id);
  }

  require(id: string): OpenTicket {
    const open = this.open.get(id);
    if (!open) throw new IpcError('not-pending', `no pending ticket ${id} (see \`airlock pending\`)`);
    return open;
  }

  pending(): Ticket[] {
    return [...this.open.values()].map((t) => t.ticket).sort((a, b) => a.createdAt - b.createdAt);
  }
}
