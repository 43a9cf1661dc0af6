// An MCP session over a child's stdio in JSON lines, for the benchmarks: no SDK client in the measured path (the
// SDK's stdio client joins its buffer on every chunk, quadratic on a 10 MB result), and, when asked, the time
// each answer was read.
import { spawn } from 'node:child_process';
import { LineSplitter } from '../proxy-core/dist/jsonrpc/lines.js';

export function rawSession(command, args, env) {
  const proc = spawn(command, args, { env, stdio: ['pipe', 'pipe', 'ignore'] });
  /** id → what settles its request: with the message, or with { m, at } for a timed one */
  const waiters = new Map();
  const splitter = new LineSplitter((line) => {
    const at = performance.now();
    const m = JSON.parse(line.toString('utf8'));
    const w = waiters.get(m.id);
    if (w) {
      waiters.delete(m.id);
      w.resolve(w.timed ? { m, at } : m);
    }
  });
  proc.stdout.on('data', (d) => splitter.push(d));
  let next = 1;
  const send = (method, params, timed) =>
    new Promise((resolve) => {
      const id = next++;
      waiters.set(id, { resolve, timed });
      proc.stdin.write(JSON.stringify({ jsonrpc: '2.0', id, method, params }) + '\n');
    });
  const request = (method, params) => send(method, params, false);
  return {
    proc,
    request,
    /** The same request, settled with `{ m, at }`: the answer and the performance.now() it was read at. */
    timedRequest: (method, params) => send(method, params, true),
    /** The process was killed: settle whatever still waits on it. */
    abandon() {
      for (const w of waiters.values()) w.resolve(w.timed ? { m: {}, at: performance.now() } : {});
      waiters.clear();
    },
    async init() {
      await request('initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'bench', version: '1' } });
      proc.stdin.write(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) + '\n');
      await request('tools/list', {});
    },
    close() {
      proc.stdin.end();
      return new Promise((r) => proc.on('exit', r));
    },
  };
}

/** `calls` pipelined calls of `tool` through each session, `inFlight` at a time in each, all sessions at once. */
export async function pipelinedCalls(sessions, tool, calls, inFlight = 32) {
  await Promise.all(
    sessions.map(async (s) => {
      let sent = 0;
      const lane = async () => {
        while (sent < calls) {
          sent++;
          await s.request('tools/call', { name: tool, arguments: { text: 'x' } });
        }
      };
      await Promise.all(Array.from({ length: inFlight }, lane));
    }),
  );
}
