/**
 * The broker's status and its wrappers' sessions: `status`, a wrapper's `session.open` (and what its
 * connection's end closes), the policy each session is pushed (policy/decide.ts applies it), the notifications a
 * wrapper sends, asking one wrapper something, and the UI host's sign-in link.
 */
import { unsealedRows } from './db/integrity.js';
import { IpcError } from '../ipc/channel.js';
import { isObject } from '../jsonrpc/messages.js';
import type { PolicySnapshot } from '../policy/decide.js';
import { rulesForSession } from '../policy/rules.js';
import type { BrokerStatus, SessionOpen } from '../protocol/api.js';
import { sessionAllows, sessionRevoke, status, sessionOpen, uiLink, wrapperRequest } from '../protocol/methods/sessions.js';
import { WrapperNote } from '../protocol/names.js';
import { settingOrFallback } from '../protocol/settings.js';
import type { Bind } from './api/handlers.js';
import { DISK_FULL_REASON } from './journal-safety.js';
import { presenceWarning } from './presence/api.js';
import type { BrokerParts } from './parts.js';
import type { Session } from './sessions.js';
import { bad } from './validate.js';

export function bindSessions(on: Bind, b: BrokerParts): void {
  on(status, () => brokerStatus(b));
  on(sessionOpen, (p, call) => {
    if (call.session) throw bad('session already open');
    if (!call.channel) throw bad('a session needs a connection');
    const session = (call.session = openSession(b, call.channel, p));
    return { sessionId: session.info.id, policy: policySnapshot(b, session), ticketTimeoutSeconds: b.ticketTimeout.seconds };
  });
  // ask one connected wrapper something through its own connection
  on(sessionAllows, () => b.sessions.all().flatMap((s) => [...s.sessionAllows].map((tool) => ({ sessionId: s.info.id, client: s.info.client, server: s.info.server, tool }))));
  on(sessionRevoke, async (p) => {
    const session = b.sessions.get(p.sessionId);
    const revoked = session?.sessionAllows.delete(p.tool) ?? false;
    if (session && revoked) {
      b.record('session-allow-revoked', session.info.server, p.tool, { sessionId: p.sessionId, client: session.info.client });
      await b.sessions.push((s) => s === session);
    }
    return { ok: true as const, revoked };
  });
  on(wrapperRequest, async (p) => ({ sessionId: p.sessionId, answer: await b.sessions.request(p.sessionId, p.method, {}) }));
  on(uiLink, () => {
    if (!b.uiLinks) throw new IpcError('bad-state', 'this broker serves no UI: start it with `airlock daemon --ui`');
    return { url: b.uiLinks() };
  });
}

export function brokerStatus(b: BrokerParts): BrokerStatus {
  return {
    estop: b.estop.on,
    estopCause: b.estop.cause,
    pending: b.tickets.size,
    sessions: b.sessions.all().map((s) => s.info),
    dataDir: b.options.dataDir,
    pid: process.pid,
    ticketTimeoutSeconds: b.ticketTimeout.seconds,
    snapshots: b.undo.totals(),
    ...b.safety.status(),
    journalPending: b.journalWriter.pending,
    otlp: b.otlp.status(),
    managed: b.managed.status(),
    presence: { required: b.presence.required, warning: presenceWarning({ presence: b.presence, getSetting: (k) => b.store.getSetting(k) }) },
    // rows without a seal as they are now (one removed since the start is no longer listed); the rest as found at start
    ...(b.store.integrity ? { integrity: { ...b.store.integrity, unsealed: unsealedRows(b.store) } } : {}),
  };
}

function openSession(b: BrokerParts, channel: Session['channel'], p: SessionOpen): Session {
  const session = b.sessions.open(channel, p);
  b.safety.disk.write(() => b.store.openSession(session.info));
  b.fileTools.noteSession(session.info.server, session.info.command);
  b.undo.sessionOpened(session, p.undo);
  b.record('session-up', session.info.server, null, { session: session.info });
  b.managed.sessionOpened(session.info);
  // loosening flags of the wrapper count only as the person's recorded choice (`airlock trust`, `airlock inverses`)
  const flags = [...(p.trustFlag && !b.store.trusts(session.info.server) ? ['--trust-read-only-hints'] : []), ...b.undo.inverses.undeclaredFlags(session.info.id)];
  if (flags.length) {
    const reason = `not applied: the person has not chosen them (\`airlock trust ${session.info.server} on\`, \`airlock inverses\`); the session runs without them`;
    b.record('wrap-flags-ignored', session.info.server, null, { client: session.info.client, flags, reason });
  }
  return session;
}

/** The wrapper went away: its held calls are denied (but those it answered "still waiting"), its session ends. */
export function closeSession(b: BrokerParts, session: Session): void {
  b.sessions.close(session);
  b.estop.budget.closed(session.info.id);
  b.undo.sessionClosed(session);
  b.pins.forget(session);
  b.safety.disk.write(() => b.store.endSession(session.info.id));
  b.tickets.sessionClosed(session);
  b.record('session-down', session.info.server, null, { sessionId: session.info.id, client: session.info.client });
}

/** What a session's wrapper applies: pushed at open and after every change that bears on it. */
export function policySnapshot(b: BrokerParts, session: Session): PolicySnapshot {
  return {
    version: b.sessions.version,
    estop: b.estop.on,
    // the team policy's rules beside the user's (the strictest that matches wins), and a denied server's deny-all
    rules: [...rulesForSession([...b.ruleBook.list(), ...b.managed.rules()], session.info.server, session.info.client), ...b.managed.sessionRules(session.info)],
    sessionAllows: [...session.sessionAllows],
    trustReadOnlyHints: b.store.trusts(session.info.server),
    // a declared inverse is evidence against a read-only claim, like an observed contradiction
    withdrawn: { ...b.undo.evidence(session), ...b.store.withdrawn(session.info.server) },
    ticketTimeoutSeconds: b.ticketTimeout.seconds,
    estopGraceSeconds: Number(settingOrFallback('estop-grace-seconds', b.store.getSetting('estop-grace-seconds'))),
    pins: b.pins.forServer(session.info.server),
    fileTools: b.undo.snapshotTools(session),
    inverseTools: b.undo.inverseTools(session),
    ...(b.safety.disk.full ? { journalDown: DISK_FULL_REASON } : {}),
    tripwire: b.estop.limits.on,
  };
}

/** A notification from a wrapper whose session is open (no answer is sent). */
export function wrapperNote(b: BrokerParts, session: Session, method: string, params: unknown): void {
  if (method === WrapperNote.policyAck) b.sessions.onAck(session, isObject(params) && typeof params.version === 'number' ? params.version : 0);
  else if (method === WrapperNote.cancel) {
    if (isObject(params) && typeof params.callId === 'string') b.tickets.cancel(session, params.callId);
  } else if (method === WrapperNote.keep) {
    if (isObject(params) && typeof params.callId === 'string') b.tickets.keep(session, params.callId);
  } else if (method === WrapperNote.structured) b.catalogs.structured(session, params);
  else if (method === WrapperNote.budgetReport && isObject(params)) b.estop.budget.report(session.info.id, placeCount(params.used), placeCount(params.returned));
}

/** A count of tripwire places in a wrapper's note (anything else is none). */
function placeCount(v: unknown): number {
  return typeof v === 'number' && Number.isSafeInteger(v) && v > 0 ? v : 0;
}
