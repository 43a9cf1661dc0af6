/**
 * A remote MCP server as an Upstream: the relay writes and reads line-framed JSON-RPC as it would to a child
 * process, and this module carries it over Streamable HTTP (or the older HTTP+SSE transport) with the SDK's
 * client transports. Loaded only by `airlock wrap --url`, so stdio wrappers never pay for the SDK.
 */
import { PassThrough, Writable } from 'node:stream';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { LineSplitter } from '../jsonrpc/lines.js';
import { errorResponse, frame, INTERNAL_ERROR, isObject, isRequest, type Message } from '../jsonrpc/messages.js';
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

  const make = (k: 'http' | 'sse'): Transport => {
    const t: Transport =
      k === 'http'
        ? new StreamableHTTPClientTransport(o.url, { requestInit })
        : // requestInit's headers go on the event stream's GET as well as on each POST
          new SSEClientTransport(o.url, { requestInit });
    t.onmessage = (m) => {
      const msg = m as unknown as Message;
      // the HTTP transports need the negotiated version on every later request, as the SDK client does
      if (initializeId !== undefined && msg.id === initializeId && isObject(msg.result) && typeof msg.result.protocolVersion === 'string') {
        t.setProtocolVersion?.(msg.result.protocolVersion);
      }
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

  const sendOne = async (m: Message) => {
    if (finished) return answerWithError(m, new Error('the connection is closed'));
    if (m.method === 'initialize') initializeId = m.id;
    try {
      await transport.send(m as unknown as JSONRPCMessage);
    } catch (err) {
      // A server that only speaks the older HTTP+SSE transport refuses the initialize POST with a 4xx.
      const refused = err instanceof StreamableHTTPError && typeof err.code === 'number' && err.code >= 400 && err.code < 500;
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
    if (isObject(m)) chain = chain.then(() => sendOne(m as Message));
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
