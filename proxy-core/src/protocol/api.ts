/**
 * The broker's protocol, defined once: every method is one declaration (method.ts) of its name, who may call
 * it, the schema of its parameters and of its result, and how long a caller waits, grouped by feature in
 * methods/*.ts and gathered here. Types are derived from these schemas, and the broker validates everything it
 * receives with the same schemas. The wrapper imports only the types (zod costs ~65 ms to load, which a
 * wrapper's start-up cannot afford); it reads what the broker sends it with the strict fallbacks in
 * `wrap/broker-link.ts`.
 */
import type { z } from 'zod';
import { type AnyMethod, byName } from './method.js';
import { catalogMethods } from './methods/catalog.js';
import { clientMethods } from './methods/clients.js';
import { estopMethods } from './methods/estop.js';
import { journalMethods } from './methods/journal.js';
import { presenceMethods } from './methods/presence.js';
import { ruleMethods } from './methods/rules.js';
import { sessionMethods } from './methods/sessions.js';
import { settingMethods } from './methods/settings.js';
import { ticketMethods } from './methods/tickets.js';
import { undoMethodList } from './methods/undo.js';
import type { ArgConditionSchema, BrokerEventSchema, BrokerStatusSchema, IntegritySchema, LogGapSchema, UnsealedRowSchema, CallRecordSchema, EstopCauseSchema, OutcomeSchema, PinChangeSchema, PolicySnapshotSchema, RememberSchema, RuleActionSchema, RuleSchema, SessionInfoSchema, TicketSchema } from './shapes.js';
import type { CatalogToolSchema, FileToolSchema, PinInfoSchema } from './methods/catalog.js';
import type { ChangeReportSchema, ClientConfigsSchema, ConfiguredServerSchema, InspectReportSchema } from './methods/clients.js';
import type { HistoryItemSchema, HistoryQuerySchema } from './methods/journal.js';
import type { SettingInfoSchema } from './methods/settings.js';
import type { SessionOpenSchema } from './methods/sessions.js';
import type { AskAnswerSchema, AskRequestSchema, PreviewSchema } from './methods/tickets.js';

export * from './shapes.js';
export { CatalogToolSchema, FileToolSchema, PinInfoSchema } from './methods/catalog.js';
export { ChangeReportSchema, ClientConfigsSchema, ConfiguredServerSchema, InspectReportSchema, ScopeNameSchema } from './methods/clients.js';
export { EventsQuerySchema, HistoryItemSchema, HistoryQuerySchema } from './methods/journal.js';
export { SettingInfoSchema } from './methods/settings.js';
export { SessionOpenSchema } from './methods/sessions.js';
export { AskAnswerSchema, AskRequestSchema, PreviewSchema } from './methods/tickets.js';
export { type AnyMethod, type MethodDecl, type MethodRole, QUICK_MS, rightsOf, type Wait, waitMs, waitsOnTicket } from './method.js';
export * from './presence.js';
export { PasskeySchema, PresenceStatusSchema } from './methods/presence.js';

/** Every method of the protocol, by name. */
export const methods = byName([...sessionMethods, ...ticketMethods, ...journalMethods, ...ruleMethods, ...estopMethods, ...settingMethods, ...catalogMethods, ...clientMethods, ...undoMethodList, ...presenceMethods]);

type Methods = typeof methods;
type ForRole<Not extends string> = { readonly [K in keyof Methods as Methods[K]['role'] extends Not ? never : K]: Methods[K] };

function forRole<T>(not: 'user' | 'wrapper'): T {
  return Object.fromEntries(Object.entries(methods as Record<string, AnyMethod>).filter(([, d]) => d.role !== not)) as T;
}

/** What a person's front end may call. */
export const userApi: ForRole<'wrapper'> = forRole('wrapper');
/** What a wrapper may call. */
export const wrapperApi: ForRole<'user'> = forRole('user');

// ---- derived types ---------------------------------------------------------------------------------------

export type UserApi = typeof userApi;
export type UserMethodKey = keyof UserApi;
/** What a front end passes (defaults may be left out). */
export type ParamsOf<M extends UserMethodKey> = z.input<UserApi[M]['params']>;
/** What the broker's handler receives (defaults filled in). */
export type CheckedParamsOf<M extends UserMethodKey> = z.output<UserApi[M]['params']>;
export type ResultOf<M extends UserMethodKey> = z.output<UserApi[M]['result']>;

export type WrapperApi = typeof wrapperApi;
export type WrapperMethodKey = keyof WrapperApi;
export type WrapperParamsOf<M extends WrapperMethodKey> = z.output<WrapperApi[M]['params']>;
export type WrapperResultOf<M extends WrapperMethodKey> = z.output<WrapperApi[M]['result']>;

export type CallRecord = z.output<typeof CallRecordSchema>;
export type Ticket = z.output<typeof TicketSchema>;
export type Rule = z.output<typeof RuleSchema>;
export type EstopCause = z.output<typeof EstopCauseSchema>;
export type RuleAction = z.output<typeof RuleActionSchema>;
export type ArgCondition = z.output<typeof ArgConditionSchema>;
export type PolicySnapshotShape = z.output<typeof PolicySnapshotSchema>;
export type SessionInfo = z.output<typeof SessionInfoSchema>;
export type BrokerStatus = z.output<typeof BrokerStatusSchema>;
export type UnsealedRow = z.output<typeof UnsealedRowSchema>;
export type LogGap = z.output<typeof LogGapSchema>;
export type Integrity = z.output<typeof IntegritySchema>;
export type BrokerEvent = z.output<typeof BrokerEventSchema>;
export type HistoryItem = z.output<typeof HistoryItemSchema>;
export type HistoryQuery = z.input<typeof HistoryQuerySchema>;
export type SessionOpen = z.output<typeof SessionOpenSchema>;
export type AskRequest = z.input<typeof AskRequestSchema>;
export type AskAnswer = z.output<typeof AskAnswerSchema>;
export type Remember = z.output<typeof RememberSchema>;
export type Outcome = z.output<typeof OutcomeSchema>;
export type ClientConfigs = z.output<typeof ClientConfigsSchema>;
export type ConfiguredServer = z.output<typeof ConfiguredServerSchema>;
export type ChangeReportResult = z.output<typeof ChangeReportSchema>;
export type InspectReportResult = z.output<typeof InspectReportSchema>;
export type CatalogTool = z.output<typeof CatalogToolSchema>;
export type FileTool = z.output<typeof FileToolSchema>;
export type Preview = z.output<typeof PreviewSchema>;
export type SettingInfo = z.output<typeof SettingInfoSchema>;
export type PinChange = z.output<typeof PinChangeSchema>;
export type PinInfo = z.output<typeof PinInfoSchema>;
