/**
 * Tickets: calls held for a human. Each ends exactly once (answered, timed out, cancelled, E-Stop, wrapper
 * gone, broker stopping), and ending one answers the wrapper that asked and is recorded.
 */
import { randomBytes } from 'node:crypto';
import { IpcError } from '../ipc/channel.js';
import type { AskAnswer, AskRequest, Remember, Ticket } from '../protocol/api.js';
import type { EventDetails } from '../protocol/events.js';
import { BrokerNote } from '../protocol/names.js';
import type { Clock, Timer } from '../util/clock.js';
import type { Session } from './sessions.js';
import type { Store } from './store.js';
import { strings, ticketArguments, toolClass } from './validate.js';

export interface OpenTicket {
  ticket: Ticket;
  session: Session;
  callId: string;
  finish: (answer: AskAnswer) => void;
  timer: Timer;
}

export interface TicketsOptions {
  store: Store;
  clock: Clock;
  timeoutSeconds: number;
  record<K extends 'ticket-created' | 'ticket-ended'>(type: K, server: string | null, tool: string | null, detail: EventDetails[K]): void;
}

export function newTicketId(): string {
  return randomBytes(4).toString('hex');
}

export class Tickets {
  private readonly open = new Map<string, OpenTicket>();

  constructor(private readonly o: TicketsOptions) {}

  get size(): number {
    return this.open.size;
  }

  /** Hold a call for a human; resolves with the answer, whoever gives it. */
  ask(session: Session, p: AskRequest): Promise<AskAnswer> {
    const ticket: Ticket = {
      id: newTicketId(),
      sessionId: session.info.id,
      callId: p.callId,
      client: session.info.client,
      server: session.info.server,
      tool: p.tool,
      ...ticketArguments(p as unknown as Record<string, unknown>),
      class: toolClass(p.class),
      reasons: strings(p.reasons),
      createdAt: this.o.clock.now(),
    };
    this.o.store.insertTicket(ticket);
    return new Promise<AskAnswer>((resolve) => {
      const timer = this.o.clock.setTimeout(() => {
        const open = this.open.get(ticket.id);
        const reason = `nobody answered within ${this.o.timeoutSeconds} s`;
        if (open) this.end(open, { decision: 'deny', decidedBy: 'timeout', ticketId: ticket.id, reason }, 'timeout', null);
      }, this.o.timeoutSeconds * 1000);
      this.open.set(ticket.id, { ticket, session, callId: p.callId, finish: resolve, timer });
      session.channel.notify(BrokerNote.ticket, { callId: p.callId, ticketId: ticket.id });
      this.o.record('ticket-created', ticket.server, ticket.tool, { ticket });
    });
  }

  /** End a ticket once: later attempts (a race between a human and a timeout) change nothing. */
  end(open: OpenTicket, answer: AskAnswer, resolution: string, remember: Remember | null): boolean {
    if (!this.open.delete(open.ticket.id)) return false;
    this.o.clock.clearTimeout(open.timer);
    this.o.store.endTicket(open.ticket.id, resolution, remember, answer.reason);
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

  cancel(session: Session, callId: string): void {
    this.denyAll((t) => t.session === session && t.callId === callId, 'cancelled', 'the client cancelled the call', 'cancelled');
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
