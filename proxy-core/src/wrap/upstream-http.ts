/**
 * A remote MCP server as an Upstream: the relay writes and reads line-framed JSON-RPC as it would to a child
 * process, and this module carries it over Streamable HTTP (or the older HTTP+SSE transport) with the SDK's
 * client transports. Loaded only by `airlock wrap --url`, so stdio wrappers never pay for the SDK.
 */
import { randomUUID } from 'node:crypto';
import { PassThrough, Writable } from 'node:stream';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { FetchLike, Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { LineSplitter } from '../jsonrpc/lines.js';
import { INVALID_REQUEST } from '../jsonrpc/inbound.js';
import { errorResponse, frame, idKey, INTERNAL_ERROR, isId, isObject, isRequest, type Message } from '../jsonrpc/messages.js';
import { HEADER_MISMATCH, type MirroredParam, metadataHeaders, mirroredParams, paramHeaders } from './http-metadata.js';
import { codeOf, describeRefusal, mayBeOlderTransport, type Refusal } from './http-refusal.js';
import type { Upstream, UpstreamEnd } from './upstream.js';

export type RemoteTransport = 'auto' | 'http' | 'sse';

export interface RemoteOptions {
  url: URL;
  headers: Record<string, string>;
  transport: RemoteTransport;
  log(msg: string): void;
}

/** How long stop() waits for the server to end its session before giving up on it. */
const TERMINATE_TIMEOUT_MS = 2000;
/** How long a refused call waits for the wrapper's own tools/list before it is answered with the refusal. */
const RELIST_TIMEOUT_MS = 5000;

export function httpUpstream(o: RemoteOptions): Upstream {
  const output = new PassThrough();
  let resolveEnd!: (end: UpstreamEnd) => void;
  const ended = new Promise<UpstreamEnd>((resolve) => (resolveEnd = resolve));
  let finished = false;
  const finish = (description: string, exitCode: number, started = true) => {
    if (finished) return;
    finished = true;
    output.end();
    resolveEnd({ description, exitCode, started });
  };

  let kind: 'http' | 'sse' = o.transport === 'sse' ? 'sse' : 'http';
  let initializeId: unknown;
  const requestInit = { headers: o.headers };
  /** What the server answered each refused request with (by id), for the client to hear in the server's words. */
  const refusals = new Map<string, Refusal>();
  /** Open tools/list requests (by id), whose answers say which parameters each tool wants mirrored. */
  const listing = new Set<string>();
  const mirrored = new Map<string, MirroredParam[]>();
  /** The wrapper's own requests (by id), answered to it and never to the client. */
  const own = new Map<string, () => void>();

  /**
   * Every POST of Streamable HTTP carries headers that mirror its body (http-metadata.ts), set here from the
   * very body the SDK sends. A refusal's status, JSON-RPC body and WWW-Authenticate are kept, since the SDK
   * turns a non-2xx answer into a bare error.
   */
  const metadataFetch: FetchLike = async (url, init) => {
    let message: unknown;
    if (init?.method === 'POST' && typeof init.body === 'string') {
      try {
        message = JSON.parse(init.body);
      } catch {
        message = undefined;
      }
    }
    const headers = new Headers(init?.headers);
    if (kind === 'http' && isObject(message)) {
      for (const [name, value] of Object.entries(metadataHeaders(message))) headers.set(name, value);
      const params = isObject(message.params) ? message.params : {};
      const wanted = message.method === 'tools/call' && typeof params.name === 'string' ? mirrored.get(params.name) : undefined;
      if (wanted) for (const [name, value] of Object.entries(paramHeaders(wanted, params.arguments))) headers.set(name, value);
    }
    const res = await fetch(url, { ...init, headers });
    if (!res.ok && isObject(message) && isId(message.id)) {
      const text = await res
        .clone()
        .text()
        .catch(() => '');
      let body: unknown;
      try {
        body = JSON.parse(text);
      } catch {
        body = undefined;
      }
      refusals.set(idKey(message.id), { status: res.status, body: isObject(body) && isObject(body.error) ? body : undefined, wwwAuthenticate: res.headers.get('www-authenticate') });
    }
    return res;
  };

  /** A tool whose x-mcp-header annotations break the rules is left out of the listing, as HTTP clients must. */
  const screenListing = (result: Record<string, unknown>) => {
    if (!Array.isArray(result.tools)) return;
    result.tools = result.tools.filter((tool: unknown) => {
      if (!isObject(tool) || typeof tool.name !== 'string') return true;
      const found = mirroredParams(tool.inputSchema);
      if ('invalid' in found) {
        o.log(`airlock: left out tool "${tool.name}" of ${o.url.origin}: ${found.invalid}`);
        return false;
      }
      if (found.params.length) mirrored.set(tool.name, found.params);
      else mirrored.delete(tool.name);
      return true;
    });
  };

  const make = (k: 'http' | 'sse'): Transport => {
    const t: Transport =
      k === 'http'
        ? new StreamableHTTPClientTransport(o.url, { requestInit, fetch: metadataFetch })
        : // requestInit's headers go on the event stream's GET as well as on each POST
          new SSEClientTransport(o.url, { requestInit });
    t.onmessage = (m) => {
      const msg = m as unknown as Message;
      if (isId(msg.id) && listing.delete(idKey(msg.id)) && k === 'http' && isObject(msg.result)) screenListing(msg.result);
      // the HTTP transports need the negotiated version on every later request, as the SDK client does
      if (initializeId !== undefined && msg.id === initializeId && isObject(msg.result) && typeof msg.result.protocolVersion === 'string') {
        t.setProtocolVersion?.(msg.result.protocolVersion);
      }
      const mine = isId(msg.id) ? own.get(idKey(msg.id)) : undefined;
      if (mine) return mine();
      output.write(frame(m));
    };
    t.onerror = (err) => o.log(`airlock: remote MCP server (${k}): ${err.message}`);
    t.onclose = () => {
      if (transport === t) finish('closed the connection', 0);
    };
    return t;
  };

  let transport: Transport = make(kind);
  // one message at a time, so the server sees them in the order the client sent them
  let chain: Promise<unknown> = transport.start().catch((err: Error) => finish(`could not be reached: ${err.message}`, 1, false));

  const answerWithError = (m: Message, err: Error) => {
    if (isRequest(m)) output.write(frame(errorResponse(m.id, INTERNAL_ERROR, `the remote MCP server could not be reached: ${err.message}`)));
    else o.log(`airlock: could not deliver ${String(m.method ?? 'a response')} to the remote MCP server: ${err.message}`);
  };

  /** List the tools again for the wrapper itself, so the headers each tool asks for are the server's latest. */
  const relist = async () => {
    const id = `airlock-relist-${randomUUID()}`;
    const answered = new Promise<void>((resolve) => {
      own.set(idKey(id), resolve);
      setTimeout(resolve, RELIST_TIMEOUT_MS).unref();
    });
    listing.add(idKey(id));
    try {
      await transport.send({ jsonrpc: '2.0', id, method: 'tools/list', params: {} });
      await answered;
    } catch {
      // the refusal the call already has is what the client hears
    } finally {
      own.delete(idKey(id));
      listing.delete(idKey(id));
    }
  };

  const sendOne = async (m: Message, again = false): Promise<void> => {
    if (finished) return answerWithError(m, new Error('the connection is closed'));
    if (m.method === 'initialize') initializeId = m.id;
    if (m.method === 'tools/list' && isId(m.id)) listing.add(idKey(m.id));
    if (kind === 'http') {
      try {
        metadataHeaders(m);
      } catch (err) {
        // refused here, with why, rather than sent with headers that do not say what the body does
        if (isRequest(m)) output.write(frame(errorResponse(m.id, INVALID_REQUEST, `Airlock did not send this request: ${(err as Error).message}`)));
        return;
      }
    }
    try {
      await transport.send(m as unknown as JSONRPCMessage);
    } catch (err) {
      const refusal = isId(m.id) ? refusals.get(idKey(m.id)) : undefined;
      if (isId(m.id)) refusals.delete(idKey(m.id));
      // A server that only speaks the older HTTP+SSE transport refuses the initialize POST (400, 404 or 405)
      // without a modern JSON-RPC error; a 401 or a modern refusal is an answer, not a sign of an old server.
      const refused = err instanceof StreamableHTTPError && typeof err.code === 'number' && mayBeOlderTransport(err.code, refusal);
      if (o.transport === 'auto' && kind === 'http' && m.method === 'initialize' && refused) {
        o.log(`airlock: ${o.url.origin} refused Streamable HTTP (${String(err.code)}); trying HTTP+SSE`);
        const old = transport;
        kind = 'sse';
        transport = make('sse');
        await old.close().catch(() => {});
        try {
          await transport.start();
          await transport.send(m as unknown as JSONRPCMessage);
          return;
        } catch (sseErr) {
          return answerWithError(m, sseErr as Error);
        }
      }
      if (refusal && isRequest(m) && m.method === 'tools/call' && codeOf(refusal) === HEADER_MISMATCH && !again) {
        // the tool may ask for other Mcp-Param headers than when it was listed: list again, and try once more
        await relist();
        return sendOne(m, true);
      }
      if (refusal && isRequest(m)) {
        const { response, log } = describeRefusal(m, refusal, o.url);
        if (log) o.log(log);
        return void output.write(frame(response));
      }
      answerWithError(m, err as Error);
    }
  };

  const lines = new LineSplitter((line) => {
    let m: unknown;
    try {
      m = JSON.parse(line.toString('utf8'));
    } catch {
      return; // the relay only writes what it parsed; nothing else can arrive here
    }
    // what goes wrong with one message is that message's (answered with why), never the wrapper's nor the chain's:
    // a rejection left unhandled here would end the process, and the chain would hold every later message back
    if (isObject(m)) chain = chain.then(() => sendOne(m as Message)).catch((err: unknown) => answerWithError(m as Message, err instanceof Error ? err : new Error(String(err))));
  });
  const input = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(chunk);
      done();
    },
  });

  let stopping: Promise<void> | null = null;
  const stop = () =>
    (stopping ??= (async () => {
      if (transport instanceof StreamableHTTPClientTransport) {
        // end the server-side session politely; a server that does not answer does not hold us up
        await Promise.race([transport.terminateSession().catch(() => {}), new Promise((r) => setTimeout(r, TERMINATE_TIMEOUT_MS))]);
      }
      await transport.close().catch(() => {});
      finish('was closed by Airlock', 0);
    })());

  return { input, output, ended, stop };
}

/** Parse `--header "Name: value"`, expanding `${VAR}` from the environment so secrets need not sit in argv. */
export function parseHeader(spec: string, env: Record<string, string | undefined>): [string, string] {
  const colon = spec.indexOf(':');
  if (colon <= 0) throw new Error(`--header takes "Name: value", got "${spec}"`);
  const name = spec.slice(0, colon).trim();
  if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name)) throw new Error(`"${name}" is not a valid header name`);
  const value = spec.slice(colon + 1).trim().replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (_m, v: string) => {
    const got = env[v];
    if (got === undefined) throw new Error(`header ${name} refers to \${${v}}, which is not set`);
    return got;
  });
  if (/[\r\n]/.test(value)) throw new Error(`header ${name} has a line break in its value`);
  return [name, value];
}
