/**
 * Connected wrappers and the policy each one runs on. A push is versioned: `push()` resolves only when every
 * wrapper it went to has acknowledged that version or has been cut off (a cut-off wrapper fails closed until
 * it reconnects and gets the current policy), so a change that tightens holds for the very next call.
 */
import { randomUUID } from 'node:crypto';
import { isAbsolute } from 'node:path';
import { type Channel, IpcError } from '../ipc/channel.js';
import type { PolicySnapshot } from '../policy/decide.js';
import type { SessionInfo, SessionOpen } from '../protocol/api.js';
import { BrokerNote, type BrokerToWrapperName } from '../protocol/names.js';
import type { Clock } from '../util/clock.js';

export interface Session {
  info: SessionInfo;
  channel: Channel;
  trustFlag: boolean;
  /** Tools the user approved for the life of this wrapper. */
  sessionAllows: Set<string>;
  acked: number;
  ackWaiters: { version: number; resolve: () => void }[];
  /** Output schemas from the last catalog, for checking structuredContent on live traffic. */
  outputSchemas: Map<string, unknown>;
  /** The wrapper's working directory (absolute), when it sent a usable one: relative path arguments start there. */
  cwd: string | undefined;
}

/** A working directory a wrapper reports, kept only when it can be one: absolute, not too long, no NUL. */
function usableCwd(cwd: string | undefined): string | undefined {
  return cwd !== undefined && cwd.length <= 4096 && !cwd.includes('\0') && isAbsolute(cwd) ? cwd : undefined;
}

export interface SessionsOptions {
  clock: Clock;
  /** How long a wrapper may take to apply a policy push before it is cut off. */
  ackTimeoutMs: number;
  /** The policy a session runs on now. */
  snapshot(session: Session): PolicySnapshot;
}

export class Sessions {
  private readonly byId = new Map<string, Session>();
  private versionCounter = 1;

  constructor(private readonly o: SessionsOptions) {}

  get version(): number {
    return this.versionCounter;
  }

  open(channel: Channel, p: SessionOpen): Session {
    const info: SessionInfo = { id: randomUUID(), client: p.client, server: p.server, command: p.command, pid: p.pid, since: this.o.clock.now() };
    const session: Session = {
      info,
      channel,
      trustFlag: p.trustFlag,
      sessionAllows: new Set(),
      acked: this.versionCounter,
      ackWaiters: [],
      outputSchemas: new Map(),
      cwd: usableCwd(p.cwd),
    };
    this.byId.set(info.id, session);
    return session;
  }

  close(session: Session): void {
    this.byId.delete(session.info.id);
    for (const w of session.ackWaiters) w.resolve();
    session.ackWaiters = [];
  }

  all(): Session[] {
    return [...this.byId.values()];
  }

  get(id: string): Session | undefined {
    return this.byId.get(id);
  }

  /** Push fresh policy to the given sessions (default all) and wait until each applied it or was cut off. */
  push(only?: (s: Session) => boolean): Promise<void> {
    const version = ++this.versionCounter;
    const waits: Promise<void>[] = [];
    for (const session of this.byId.values()) {
      if (only && !only(session)) continue;
      const wait = new Promise<void>((resolve) => session.ackWaiters.push({ version, resolve }));
      const timer = this.o.clock.setTimeout(() => {
        // A wrapper that cannot confirm the new policy might still act on the old one: cut it off, so it
        // fails closed until it reconnects and gets the current policy.
        if (session.acked < version) session.channel.destroy(new IpcError('ack-timeout', 'policy not acknowledged'));
      }, this.o.ackTimeoutMs);
      waits.push(wait.finally(() => this.o.clock.clearTimeout(timer)));
      session.channel.notify(BrokerNote.policy, this.o.snapshot(session));
    }
    return Promise.all(waits).then(() => undefined);
  }

  onAck(session: Session, version: number): void {
    if (version > session.acked) session.acked = version;
    const still: Session['ackWaiters'] = [];
    for (const w of session.ackWaiters) {
      if (w.version <= session.acked) w.resolve();
      else still.push(w);
    }
    session.ackWaiters = still;
  }

  /** Ask a connected wrapper something (the broker's requests to a wrapper); rejects when it is gone. */
  request(sessionId: string, method: BrokerToWrapperName, params: unknown, timeoutMs = 5000): Promise<unknown> {
    const session = this.byId.get(sessionId);
    if (!session) return Promise.reject(new IpcError('not-found', `no connected wrapper with session ${sessionId} (see \`airlock status\`)`));
    return session.channel.request(method, params, timeoutMs);
  }
}
