/**
 * The one contract between the main process and the preload: the channel names, what travels on each, and
 * which broker methods a window may call. The preload imports only the types from here (a sandboxed preload
 * is a single CommonJS file that may require nothing but `electron`), so it spells the channel names itself,
 * typed as `Channels`: the compiler keeps both spellings equal.
 */
import type { ApiErrorShape, BrokerEvent, StreamState, UiMethod } from '@airlock/proxy-core';
import { UserMethod } from '@airlock/proxy-core';

export interface Channels {
  /** invoke(method, params) → CallReply */
  call: 'airlock:call';
  /** send(id, since): stream events after `since` to this window, tagged with `id` */
  subscribe: 'airlock:subscribe';
  /** send(id) */
  unsubscribe: 'airlock:unsubscribe';
  /** main → window: (id, event) */
  event: 'airlock:event';
  /** main → window: (id, state) */
  state: 'airlock:state';
  /** invoke() → boolean */
  startAtLoginGet: 'airlock:start-at-login:get';
  /** invoke(on) → void */
  startAtLoginSet: 'airlock:start-at-login:set';
}

export const CHANNELS: Channels = {
  call: 'airlock:call',
  subscribe: 'airlock:subscribe',
  unsubscribe: 'airlock:unsubscribe',
  event: 'airlock:event',
  state: 'airlock:state',
  startAtLoginGet: 'airlock:start-at-login:get',
  startAtLoginSet: 'airlock:start-at-login:set',
};

/**
 * A call's answer as it crosses IPC. Not a thrown error: Electron keeps only the message of an error thrown in
 * a handler (and the context bridge only the message of an Error), and the UI needs the broker's code.
 */
export type CallReply = { ok: true; result: unknown } | { ok: false; error: ApiErrorShape };

/** What the main process pushes for one subscription. */
export type EventPush = [id: string, event: BrokerEvent];
export type StatePush = [id: string, state: StreamState];

/** The largest params a window may send with one call (JSON text); the broker's own limits are far below. */
export const MAX_PARAMS_BYTES = 256 * 1024;
/** Streams one window may hold at once: a page needs one; more is a leak or an attack. */
export const MAX_STREAMS_PER_WINDOW = 8;
/** A subscription id: chosen by the preload, unique within its window. */
export const SUBSCRIPTION_ID = /^[A-Za-z0-9_-]{1,64}$/;

/** What the UI may call: every front-end method but the stream's plumbing and asking a wrapper directly. */
const NOT_FOR_UI = new Set<string>([UserMethod.subscribe, UserMethod.unsubscribe, UserMethod.wrapperRequest]);
export const UI_METHODS: ReadonlySet<string> = new Set(Object.values(UserMethod).filter((m) => !NOT_FOR_UI.has(m)));

export function isUiMethod(method: unknown): method is UiMethod {
  return typeof method === 'string' && UI_METHODS.has(method);
}
