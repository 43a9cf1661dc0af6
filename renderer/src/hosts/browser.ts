/**
 * The browser host's side of `AirlockApi`: `airlock daemon --ui` serves this window and the broker's API on
 * the same origin. A call is `POST /api/call/<method>` with the params as JSON; the event stream is Server-Sent
 * Events from `GET /api/events?since=N` (each message a BrokerEvent, its `id:` the seq, so the browser resumes
 * with Last-Event-ID by itself). main.ts loads this module on demand, only when no host put `window.airlock` there.
 */
import type { AirlockApi, EventHandlers, UiMethod } from '@airlock/proxy-core/protocol/ui-contract';
import type { BrokerEvent, ParamsOf, ResultOf } from '@airlock/proxy-core/protocol/api';

/** A refusal from the broker (or the host): its code and its message. */
export class ApiError extends Error {
  override name = 'ApiError';
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

const SIGNED_OUT = 'signed out: open the URL `airlock daemon --ui` prints to sign in again';

async function call<M extends UiMethod>(method: M, params: ParamsOf<M>): Promise<ResultOf<M>> {
  let res: Response;
  try {
    res = await fetch(`/api/call/${encodeURIComponent(method)}`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(params ?? {}),
      credentials: 'same-origin',
      cache: 'no-store',
    });
  } catch (err) {
    throw new ApiError('unreachable', err instanceof Error ? err.message : String(err));
  }
  let body: unknown;
  try {
    body = await res.json();
  } catch {
    throw new ApiError(res.ok ? 'bad-answer' : `http-${res.status}`, `the host answered ${res.status} ${res.statusText} without JSON`);
  }
  const b = (typeof body === 'object' && body !== null ? body : {}) as { result?: unknown; error?: { code?: unknown; message?: unknown } };
  if (!res.ok || b.error) {
    const code = typeof b.error?.code === 'string' ? b.error.code : `http-${res.status}`;
    const message = typeof b.error?.message === 'string' ? b.error.message : `the host answered ${res.status}`;
    throw new ApiError(code, res.status === 401 ? SIGNED_OUT : message);
  }
  return b.result as ResultOf<M>;
}

/** Whether the host still knows this window (false: the sign-in is gone, the stream will not come back). */
async function signedIn(): Promise<boolean | null> {
  try {
    const res = await fetch('/api/call/status', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{}', credentials: 'same-origin', cache: 'no-store' });
    return res.status !== 401;
  } catch {
    return null;
  }
}

const RETRY_MIN_MS = 1000;
const RETRY_MAX_MS = 30_000;

function subscribe(since: number, handlers: EventHandlers): () => void {
  let last = since;
  let source: EventSource | null = null;
  let stopped = false;
  let retryMs = RETRY_MIN_MS;
  let retry: ReturnType<typeof setTimeout> | undefined;

  const end = (reason: string): void => {
    if (stopped) return;
    stopped = true;
    source?.close();
    clearTimeout(retry);
    handlers.state({ state: 'ended', reason });
  };

  const open = (): void => {
    if (stopped) return;
    const es = new EventSource(`/api/events?since=${last}`, { withCredentials: true });
    source = es;
    es.onopen = () => {
      retryMs = RETRY_MIN_MS;
      handlers.state({ state: 'live' });
    };
    es.onmessage = (m: MessageEvent<string>) => {
      let event: BrokerEvent;
      try {
        event = JSON.parse(m.data) as BrokerEvent;
      } catch {
        return;
      }
      if (typeof event.seq !== 'number' || event.seq <= last) return;
      last = event.seq;
      handlers.event(event);
    };
    es.addEventListener('ended', (m: MessageEvent<string>) => {
      let reason = 'the broker ended the stream';
      try {
        const d = JSON.parse(m.data) as { ended?: unknown };
        if (typeof d.ended === 'string') reason = d.ended;
      } catch {
        // the reason stays generic
      }
      end(reason);
    });
    es.onerror = () => {
      if (stopped || source !== es) return;
      if (es.readyState === EventSource.CONNECTING) {
        // the browser reconnects by itself, with Last-Event-ID
        handlers.state({ state: 'reconnecting', reason: 'the connection to Airlock was lost' });
        return;
      }
      // closed for good by the browser (an error status, such as 401): find out why, then try again or stop
      es.close();
      source = null;
      handlers.state({ state: 'reconnecting', reason: 'the connection to Airlock was refused' });
      void signedIn().then((ok) => {
        if (stopped) return;
        if (ok === false) return end(SIGNED_OUT);
        retry = setTimeout(open, retryMs);
        retryMs = Math.min(RETRY_MAX_MS, retryMs * 2);
      });
    };
  };

  handlers.state({ state: 'reconnecting', reason: 'connecting' });
  open();
  return () => {
    stopped = true;
    clearTimeout(retry);
    source?.close();
    source = null;
  };
}

/** The `AirlockApi` of a window served by `airlock daemon --ui`. */
export function createBrowserApi(): AirlockApi {
  return { call, subscribe, host: { kind: 'browser' } };
}
