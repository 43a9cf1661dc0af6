#!/usr/bin/env node
// A Streamable HTTP front for a stdio MCP server: `node http-front.mjs -- <command> [args...]`. Each HTTP session
// gets its own child (started at its initialize, stopped when the session ends) and every JSON-RPC message is
// relayed unchanged both ways, so the same server can be put in front of an HTTP-only test suite directly or
// behind `airlock wrap`. Prints "listening <port>" on stdout once ready; stops on SIGTERM.
import { createServer } from 'node:http';
import { randomUUID } from 'node:crypto';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { InMemoryEventStore } from '@modelcontextprotocol/sdk/examples/shared/inMemoryEventStore.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';

const sep = process.argv.indexOf('--');
const [command, ...args] = sep < 0 ? [] : process.argv.slice(sep + 1);
if (!command) {
  process.stderr.write('usage: http-front.mjs -- <command> [args...]\n');
  process.exit(2);
}

/** @type {Map<string, StreamableHTTPServerTransport>} */
const sessions = new Map();
const children = new Set();
/** @type {Map<StreamableHTTPServerTransport, { open: number, timer?: NodeJS.Timeout, close(): void }>} */
const activity = new Map();

/**
 * A client that goes away without DELETE (the SDK's close() sends none) would leave its session, and the child
 * behind it, running until the front stops. A session with no HTTP exchange open (no request, no GET stream) for
 * a while is over; a live SDK client keeps its GET stream open between requests.
 */
const IDLE_MS = 3000;
function track(http, res) {
  const a = activity.get(http);
  if (!a) return;
  clearTimeout(a.timer);
  a.open++;
  res.once('close', () => {
    if (--a.open === 0) a.timer = setTimeout(a.close, IDLE_MS);
  });
}

function isRequest(m) {
  return 'method' in m && 'id' in m;
}

/**
 * A server's message that is not a response goes back on the HTTP stream of the client request it belongs to, as
 * an in-process server's would: a progress notification by its token, anything else (logs, sampling, elicitation)
 * by the newest request still open. Left on the session's GET stream instead, it could overtake or trail the
 * response it came before.
 */
function relatedTo(message, open) {
  const token = message.method === 'notifications/progress' ? message.params?.progressToken : undefined;
  if (token !== undefined) for (const [id, t] of open) if (t === token) return id;
  return [...open.keys()].at(-1);
}

async function openSession(port) {
  const open = new Map(); // client request id -> its progress token
  const child = new StdioClientTransport({ command, args, env: process.env, stderr: process.env.FRONT_CHILD_STDERR ? 'inherit' : 'ignore' });
  const local = [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`];
  const http = new StreamableHTTPServerTransport({
    sessionIdGenerator: () => randomUUID(),
    eventStore: new InMemoryEventStore(),
    retryInterval: 500,
    // a localhost server must refuse other hosts (DNS rebinding); the front is that server to the suite
    enableDnsRebindingProtection: true,
    allowedHosts: local,
    allowedOrigins: local.map((h) => `http://${h}`),
    onsessioninitialized: (id) => sessions.set(id, http),
  });
  http.onmessage = (m) => {
    if (isRequest(m)) open.set(m.id, m.params?._meta?.progressToken);
    child.send(m).catch(() => http.close());
  };
  child.onmessage = (m) => {
    if ('id' in m && !('method' in m)) {
      open.delete(m.id);
      http.send(m).catch(() => {});
    } else http.send(m, { relatedRequestId: relatedTo(m, open) }).catch(() => {});
  };
  let closed = false;
  const close = () => {
    if (closed) return;
    closed = true;
    if (http.sessionId) sessions.delete(http.sessionId);
    clearTimeout(activity.get(http)?.timer);
    activity.delete(http);
    children.delete(child);
    void child.close();
    void http.close();
  };
  http.onclose = close;
  child.onclose = close;
  activity.set(http, { open: 0, close });
  await child.start();
  children.add(child);
  return http;
}

async function readBody(req) {
  const chunks = [];
  for await (const c of req) chunks.push(c);
  const raw = Buffer.concat(chunks).toString('utf8');
  try {
    return JSON.parse(raw);
  } catch {
    return undefined;
  }
}

const server = createServer(async (req, res) => {
  try {
    const body = req.method === 'POST' ? await readBody(req) : undefined;
    const id = req.headers['mcp-session-id'];
    let transport = typeof id === 'string' ? sessions.get(id) : undefined;
    if (!transport && !id && req.method === 'POST' && body && isInitializeRequest(body)) transport = await openSession(server.address().port);
    if (!transport) {
      res.writeHead(id ? 404 : 400, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32000, message: id ? 'Session not found' : 'No session: initialize first' } }));
      return;
    }
    track(transport, res);
    await transport.handleRequest(req, res, body);
  } catch (err) {
    if (!res.headersSent) res.writeHead(500);
    res.end(String(err));
  }
});
server.listen(0, '127.0.0.1', () => process.stdout.write(`listening ${server.address().port}\n`));
process.on('SIGTERM', async () => {
  await Promise.allSettled([...children].map((c) => c.close()));
  process.exit(0);
});
