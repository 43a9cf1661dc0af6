/**
 * Every method and notification name spoken between wrappers, front ends (CLI, UI, app) and the broker, and
 * who may send it. Plain constants with no schema library behind them, so the wrapper can use them without
 * paying for zod at start-up; each method is declared with its schemas, role and wait in `methods/*.ts`,
 * gathered in `api.ts`.
 */

export type Role = 'wrapper' | 'cli' | 'ui' | 'app';

/** The roles of a person's front end: only these may loosen anything, answer tickets or read the journal. */
/** `app`: the desktop app's line (a claim like the others: what the app proves, it proves with its key). */
export const USER_ROLES: readonly Role[] = ['cli', 'ui', 'app'];
export const WRAPPER_ROLES: readonly Role[] = ['wrapper'];

/** Requests a front end sends the broker. */
export const UserMethod = {
  status: 'status',
  pending: 'pending',
  approve: 'approve',
  deny: 'deny',
  estop: 'estop',
  history: 'history',
  sessionsList: 'sessions.list',
  sessionStory: 'sessions.story',
  historyExport: 'history.export',
  events: 'events',
  subscribe: 'events.subscribe',
  unsubscribe: 'events.unsubscribe',
  rulesList: 'rules.list',
  rulesAdd: 'rules.add',
  rulesRemove: 'rules.remove',
  trustSet: 'trust.set',
  trustList: 'trust.list',
  catalog: 'catalog',
  settingsGet: 'settings.get',
  settingsSet: 'settings.set',
  wrapperRequest: 'wrapper.request',
  sessionAllows: 'session.allows',
  sessionRevoke: 'session.revoke',
  settingsList: 'settings.list',
  clientsList: 'clients.list',
  protect: 'clients.protect',
  unprotect: 'clients.unprotect',
  inspect: 'inspect',
  preview: 'ticket.preview',
  ticketArguments: 'ticket.arguments',
  fileToolsList: 'file-tools.list',
  fileToolsSet: 'file-tools.set',
  fileToolsRemove: 'file-tools.remove',
  undo: 'undo',
  undoLast: 'undo.last',
  rollback: 'rollback',
  inversesList: 'inverses.list',
  inversesSet: 'inverses.set',
  inversesRemove: 'inverses.remove',
  pinsList: 'pins.list',
  pinsAccept: 'pins.accept',
  /** A fresh single-use sign-in link of the UI host (`airlock ui`); never answered over HTTP. */
  uiLink: 'ui.link',
  presenceStatus: 'presence.status',
  presenceChallenge: 'presence.challenge',
  presenceEnd: 'presence.end',
  presenceConfirm: 'presence.confirm',
  passkeyOptions: 'passkey.options',
  passkeyRegister: 'passkey.register',
  passkeyList: 'passkey.list',
  passkeyRemove: 'passkey.remove',
} as const;
export type UserMethodName = (typeof UserMethod)[keyof typeof UserMethod];

/** Requests a wrapper sends the broker. */
export const WrapperMethod = {
  sessionOpen: 'session.open',
  ask: 'call.ask',
  journal: 'journal',
  catalogUpdate: 'catalog.update',
  observed: 'observed',
  /** Before a call of a file tool is sent: record the prior state of the files it names (undo). */
  prepare: 'call.prepare',
  /** Report the tripwire places used and ask for more (broker/tripwire-budget.ts): a changing call waits on it. */
  budget: 'tripwire.budget',
} as const;
export type WrapperMethodName = (typeof WrapperMethod)[keyof typeof WrapperMethod];

/** Notifications a wrapper sends the broker (no answer). */
export const WrapperNote = {
  policyAck: 'policy.ack',
  cancel: 'call.cancel',
  /** The call was answered "still waiting": its ticket stays open after the session ends, for the same call made again. */
  keep: 'call.keep',
  structured: 'structured',
  /** Tripwire places used, and ones given back (asked to, or on closing). */
  budgetReport: 'tripwire.report',
} as const;

/** Requests the broker sends a wrapper (answered by the wrapper). */
export const BrokerToWrapper = {
  /** Liveness and identity of a wrapper, as the broker sees it (also what a front end's `wrapper.request` may ask). */
  status: 'wrapper.status',
  /** Run one tools/call upstream on the broker's behalf: a declared inverse, for an undo a person asked for. */
  callTool: 'wrapper.call-tool',
  /** A page of a held call's whole arguments (a ticket carries only their first part), for a person to read. */
  heldArguments: 'wrapper.held-arguments',
} as const;
export type BrokerToWrapperName = (typeof BrokerToWrapper)[keyof typeof BrokerToWrapper];

/** Notifications the broker sends. */
export const BrokerNote = {
  policy: 'policy',
  ticket: 'ticket',
  event: 'event',
  pong: 'pong',
  /** Give back the tripwire places you hold and have not used (another session's call waits for one). */
  budgetReclaim: 'tripwire.reclaim',
} as const;

/** Either side may send this; the broker answers with `pong` (the heartbeat). */
export const PING = 'ping';

/** The handshake: the only request accepted before authentication, and the broker's opening note. */
export const AUTH = 'auth';
export const HELLO = 'hello';
