/**
 * The browser host's side of `AirlockApi`: `airlock daemon --ui` serves this window and the broker's API on
 * the same origin. A call is `POST /api/call/<method>` with the params as JSON and the session's key in
 * `X-Airlock-Key`; the event stream is Server-Sent Events from `GET /api/events?ticket=T&since=N`, T a one-time
 * ticket from `POST /api/events/ticket` (each message a BrokerEvent, its `id:` the seq). main.ts loads this module
 * on demand, only when no host put `window.airlock` there.
 *
 * The key comes once, in the sign-in redirect's URL fragment: it is taken out of the address (so it is in no
 * history entry) and kept in this tab's sessionStorage, so a reload still works. sessionStorage is kept apart by
 * origin, port included (a page on another loopback port, which the browser does hand the cookie, cannot read
 * it), is this tab's only, and ends with the tab; the cookie alone opens nothing.
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

const SIGNED_OUT = 'not signed in: run `airlock ui` and open the link it prints (`airlock ui --open` opens it)';
const KEY_FRAGMENT = 'airlock-key=';
const KEY_STORAGE = 'airlock-key';

/** The key of this tab: from the sign-in redirect's fragment (then removed from the address), else as kept. */
function takeKey(): string | null {
  const hash = location.hash;
  if (hash.startsWith(`#${KEY_FRAGMENT}`)) {
    const key = hash.slice(1 + KEY_FRAGMENT.length);
    history.replaceState(history.state, '', `${location.pathname}${location.search}#/`);
    if (/^[A-Za-z0-9_-]{16,256}$/.test(key)) {
      try {
        sessionStorage.setItem(KEY_STORAGE, key);
      } catch {
        // storage off: the key lives in memory only, and a reload needs a fresh link
      }
      return key;
    }
  }
  try {
    return sessionStorage.getItem(KEY_STORAGE);
  } catch {
    return null;
  }
}

let key: string | null = null;

const headers = (): Record<string, string> => ({ 'Content-Type': 'application/json', ...(key ? { 'X-Airlock-Key': key } : {}) });

async function post(path: string, body: string): Promise<Response> {
  return fetch(path, { method: 'POST', headers: headers(), body, credentials: 'same-origin', cache: 'no-store' });
}

async function call<M extends UiMethod>(method: M, params: ParamsOf<M>): Promise<ResultOf<M>> {
  let res: Response;
  try {
    res = await post(`/api/call/${encodeURIComponent(method)}`, JSON.stringify(params ?? {}));
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
    const res = await post('/api/call/status', '{}');
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

  /** A stream that failed: find out why, then try again (a fresh ticket) or stop. */
  const failed = (): void => {
    source = null;
    handlers.state({ state: 'reconnecting', reason: 'the connection to Airlock was lost' });
    void signedIn().then((ok) => {
      if (stopped) return;
      if (ok === false) return end(SIGNED_OUT);
      retry = setTimeout(open, retryMs);
      retryMs = Math.min(RETRY_MAX_MS, retryMs * 2);
    });
  };

  const open = (): void => {
    if (stopped) return;
    // each stream is opened with a one-time ticket: a reconnect asks for a new one (and resumes from `last`)
    void post('/api/events/ticket', '{}')
      .then(async (res) => {
        const body = (await res.json()) as { result?: { ticket?: unknown } };
        if (!res.ok || typeof body.result?.ticket !== 'string') throw new Error(`no ticket (${res.status})`);
        return body.result.ticket;
      })
      .then(
        (ticket) => connect(ticket),
        () => failed(),
      );
  };

  const connect = (ticket: string): void => {
    if (stopped) return;
    const es = new EventSource(`/api/events?ticket=${encodeURIComponent(ticket)}&since=${last}`, { withCredentials: true });
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
      // the browser's own reconnect would reuse the spent ticket: close, and open anew with a fresh one
      es.close();
      failed();
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
  key = takeKey();
  return { call, subscribe, host: { kind: 'browser' } };
}
