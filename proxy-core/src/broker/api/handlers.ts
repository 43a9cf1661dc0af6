/**
 * The broker's side of each declared method (protocol/method.ts): one handler bound to one declaration, in the
 * manner of `setRequestHandler(Schema, handler)`. Each feature binds its own methods beside the code that
 * implements them (tickets/api.ts, rules-api.ts, ...); a method declared and not bound, or bound twice, stops
 * the broker from starting rather than answering "unknown method" at run time.
 */
import type { z } from 'zod';
import { type Channel, IpcError } from '../../ipc/channel.js';
import { type AnyMethod, methods } from '../../protocol/api.js';
import type { Via } from '../../protocol/presence.js';
import type { FrontEnd } from '../presence/presence.js';
import type { Session } from '../sessions.js';

/** What a handler knows of the call besides its params: the connection it came on. */
export interface CallContext {
  /** The connection; null for an in-process host (the UI host, the app's main process). */
  readonly channel: Channel | null;
  /** The session a wrapper opened on this connection (`session.open`), once it has. */
  session: Session | null;
  /** Event subscriptions made on this connection: they end with it. */
  readonly subscriptions: Set<string>;
  /** Who is calling, for presence: the front end's kind, its lease key, its process. */
  readonly frontEnd: FrontEnd;
}

let inProcessCount = 0;

/** A context for a call that comes on no connection (a UI session's key, or one of its own). */
export function inProcess(frontEnd?: FrontEnd): CallContext {
  return { channel: null, session: null, subscriptions: new Set(), frontEnd: frontEnd ?? { kind: 'in-process', key: `in-process:${++inProcessCount}`, peer: null } };
}

export type Handler<D extends AnyMethod> = (params: z.output<D['params']>, call: CallContext, via: Via) => z.output<D['result']> | Promise<z.output<D['result']>>;

/** How a feature binds a handler to one of its declared methods. */
export type Bind = <D extends AnyMethod>(decl: D, handler: Handler<D>) => void;

export interface Bound {
  readonly decl: AnyMethod;
  readonly run: (params: unknown, call: CallContext, via: Via) => unknown;
}

export class Handlers {
  private readonly bound = new Map<string, Bound>();

  /** `declared`: the protocol's methods (another table only in tests). */
  constructor(private readonly declared: Readonly<Record<string, AnyMethod>> = methods) {}

  readonly on: Bind = (decl, handler) => {
    if (!Object.hasOwn(this.declared, decl.name) || this.declared[decl.name] !== decl) throw new Error(`${decl.name} is not a declared method`);
    if (this.bound.has(decl.name)) throw new Error(`${decl.name} has a handler already`);
    this.bound.set(decl.name, { decl, run: handler as Bound['run'] });
  };

  /**
   * Put a check or a change around a bound handler (the team policy's refusals and markers: managed/api.ts),
   * so that a feature's own handler stays as it is.
   */
  around<D extends AnyMethod>(decl: D, wrap: (run: Handler<D>) => Handler<D>): void {
    const bound = this.bound.get(decl.name);
    if (!bound || bound.decl !== decl) throw new Error(`${decl.name} has no handler to put a check around`);
    this.bound.set(decl.name, { decl, run: wrap(bound.run as Handler<D>) as Bound['run'] });
  }

  /** The handler of a declared method; undefined for any other name. */
  get(name: string): Bound | undefined {
    return this.bound.get(name);
  }

  /** Declared methods with no handler. */
  missing(): string[] {
    return Object.keys(this.declared).filter((name) => !this.bound.has(name));
  }

  /** Throws unless every declared method has its handler. */
  complete(): this {
    const missing = this.missing();
    if (missing.length) throw new Error(`declared methods with no handler: ${missing.join(', ')}`);
    return this;
  }
}

/** A wrapper method that needs the session the wrapper opened first. */
export function inSession<P, R>(run: (session: Session, params: P) => R): (params: P, call: CallContext) => R {
  return (params, call) => {
    if (!call.session) throw new IpcError('no-session', 'open a session first');
    return run(call.session, params);
  };
}
