/**
 * The one contract the UI codes against, whoever hosts it: the browser host (`airlock daemon --ui`, over HTTP
 * and Server-Sent Events) and the desktop app's preload (over Electron IPC) each implement `AirlockApi`. The
 * renderer imports these types only; nothing in it knows which host it runs in beyond `host.kind` and the
 * optional host abilities below.
 */
import type { BrokerEvent, ParamsOf, ResultOf, UserMethodKey } from './api.js';
import type { UserMethod } from './names.js';

/**
 * What the UI may call: every front-end method but the stream's own plumbing (a host turns `subscribe` into
 * its own transport) and asking a wrapper directly (a diagnostic for the CLI).
 */
export type UiMethod = Exclude<UserMethodKey, typeof UserMethod.subscribe | typeof UserMethod.unsubscribe | typeof UserMethod.wrapperRequest | typeof UserMethod.uiLink>;

/** The state of the event stream as the UI shows it. */
export type StreamState =
  /** Connected: every event after the last one seen arrives, in order. */
  | { state: 'live' }
  /** Lost: the host is getting it back and will resume after the last event seen. */
  | { state: 'reconnecting'; reason: string }
  /** Over for good (the broker stopped, the sign-in expired): the UI says so and why. */
  | { state: 'ended'; reason: string };

export interface EventHandlers {
  event(event: BrokerEvent): void;
  state(state: StreamState): void;
}

/** A broker error as the UI sees it: the protocol's error code and its one-line message. */
export interface ApiErrorShape {
  code: string;
  message: string;
}

export interface HostInfo {
  kind: 'browser' | 'desktop';
  /** Start the desktop app when the person logs in: only where the host can (the desktop app). */
  startAtLogin?: { get(): Promise<boolean>; set(on: boolean): Promise<void> };
}

export interface AirlockApi {
  /** One request to the broker; rejects with an `ApiErrorShape`-like Error (its `code` set) when refused. */
  call<M extends UiMethod>(method: M, params: ParamsOf<M>): Promise<ResultOf<M>>;
  /**
   * Every event after `since` (a `seq`; 0 for all that the journal keeps), then live ones, in order, never
   * polled. Reconnects resume after the last event delivered. Returns the way to stop.
   */
  subscribe(since: number, handlers: EventHandlers): () => void;
  host: HostInfo;
}
