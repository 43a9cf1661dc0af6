// Where one call's time goes, one call at a time, through the plain byte relay and through `airlock wrap` in the
// same run (fixture server, allowed `echo`, blocks alternating). Each proxy and its server run with
// bench/call-path-preload.mjs, which notes when bytes reach its code, when it starts a write, and when the event
// loop's turn ends, on the clock the client reads too. So each call splits into: the client's request reaching the
// proxy's code; the proxy's work up to its write to the server; from that write until the server's answer reaches
// the proxy's code (the server's own turn, and whatever the proxy was still busy with); the proxy's work up to its
// write to the client; the answer reaching the client. Beside them, how long the proxy stays busy after each write
// (its turn's end): on a machine whose cores the client, proxy and server share, the peer it has just woken may
// wait for that. And, to tell the server's own speed from the hand-offs around it, the server's code from a
// request to its answer. Medians of each part. Imported by a runner that owns the broker
// (callPathRows({ home, env })), or run on its own (`node bench/call-path.mjs [--quick]`). Not a test: nothing here
// passes or fails.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { withOwnBroker } from './own-broker.mjs';
import { rawSession } from './raw-session.mjs';
import { BrokerClient } from '../proxy-core/dist/ipc/client.js';
import { allowedCallsTo, settled } from './broker-state.mjs';
import { ROOT, RELAY, FIXTURE, WRAP } from './paths.mjs';
import { quantile } from './stats.mjs';

const PRELOAD = join(ROOT, 'bench', 'call-path-preload.mjs');
const SERVER = 'bench-call-path';
const DATA = 1;
const WRITE = 2;
const TURN_END = 3;
const PARTS = [
  "the client's request to the proxy's code",
  "the proxy's code to its write to the server",
  "that write to the server's answer in the proxy's code",
  "the proxy's code to its write to the client",
  'that write to the answer at the client',
  'the whole call',
  'the proxy busy after its write to the server',
  'the proxy busy after its write to the client',
  "the server's own code, from the request to its answer's write",
];

const clock = () => performance.timeOrigin + performance.now();

function session(mode, env) {
  const node = process.execPath;
  const proxy = mode === 'relay' ? [RELAY, '--'] : [...WRAP, '--name', SERVER, '--client', 'bench', '--'];
  return rawSession(node, ['--import', PRELOAD, ...proxy, node, '--import', PRELOAD, FIXTURE], env);
}

/** What a process with the preload noted since the last ask. */
async function noted(pid, dir) {
  const file = join(dir, `${pid}.json`);
  rmSync(file, { force: true });
  process.kill(pid, 'SIGUSR2');
  for (let i = 0; i < 200; i++) {
    try {
      const flat = JSON.parse(readFileSync(file, 'utf8'));
      const events = [];
      for (let k = 0; k < flat.length; k += 3) events.push({ at: flat[k], kind: flat[k + 1], fd: flat[k + 2] });
      return events;
    } catch {
      await new Promise((r) => setTimeout(r, 10));
    }
  }
  throw new Error(`call-path bench: process ${pid} did not write what it noted`);
}

/** The server a proxy started (its one child). */
function serverOf(s) {
  const pid = Number(readFileSync(`/proc/${s.proc.pid}/task/${s.proc.pid}/children`, 'utf8').trim().split(/\s+/)[0]);
  if (!Number.isInteger(pid) || pid <= 0) throw new Error('call-path bench: the proxy has no server process');
  return pid;
}

/** The server's own time for each request: from the line reaching its code to the start of its answer's write. */
function serverOwn(events) {
  const own = [];
  for (let i = 0; i < events.length; i++) {
    if (events[i].kind !== DATA || events[i].fd !== 0) continue;
    const w = events.slice(i + 1, i + 8).find((e) => e.kind === WRITE && e.fd === 1);
    if (w) own.push((w.at - events[i].at) * 1000);
  }
  return own;
}

/** The most frequent value. */
function mode(xs) {
  const counts = new Map();
  for (const x of xs) counts.set(x, (counts.get(x) ?? 0) + 1);
  return [...counts].sort((a, b) => b[1] - a[1])[0]?.[0];
}

/**
 * Each call's parts from the client's times and the proxy's events. The fds the proxy writes the server and
 * reads it on are the ones it uses most right after the client's request and after its write to the server (a
 * journal batch to the broker is a write too, now and then).
 */
function split(sent, received, events) {
  const next = (from, test) => {
    for (let i = from; i < events.length; i++) if (test(events[i])) return i;
    return -1;
  };
  const afterRequest = [];
  for (let i = 0; i < events.length; i++) {
    if (events[i].kind !== DATA || events[i].fd !== 0) continue;
    const w = next(i + 1, (e) => e.kind === WRITE);
    if (w >= 0) afterRequest.push(events[w].fd);
  }
  const toServer = mode(afterRequest.filter((fd) => fd > 2));
  const fromServer = mode(events.filter((e) => e.kind === DATA && e.fd > 2 && e.fd !== toServer).map((e) => e.fd));
  const parts = PARTS.map(() => []);
  let at = 0;
  for (let c = 0; c < sent.length; c++) {
    const a = next(at, (e) => e.kind === DATA && e.fd === 0 && e.at >= sent[c] - 0.05);
    const b = a < 0 ? -1 : next(a, (e) => e.kind === WRITE && e.fd === toServer);
    const d = b < 0 ? -1 : next(b, (e) => e.kind === DATA && e.fd === fromServer);
    const w = d < 0 ? -1 : next(d, (e) => e.kind === WRITE && e.fd === 1);
    if (w < 0) break;
    at = w;
    const t = [sent[c], events[a].at, events[b].at, events[d].at, events[w].at, received[c]];
    for (let p = 0; p < 5; p++) parts[p].push((t[p + 1] - t[p]) * 1000);
    parts[5].push((received[c] - sent[c]) * 1000);
    const requestTurn = next(a, (e) => e.kind === TURN_END && e.fd === 0);
    const answerTurn = next(d, (e) => e.kind === TURN_END && e.fd === fromServer);
    if (requestTurn >= 0) parts[6].push(Math.max(0, events[requestTurn].at - events[b].at) * 1000);
    if (answerTurn >= 0) parts[7].push(Math.max(0, events[answerTurn].at - events[w].at) * 1000);
  }
  return parts;
}

/** Run the measure against the broker in `home` (an allow rule for the server is added and removed here). */
export async function callPathRows({ home, env, quick = false }) {
  const calls = quick ? 500 : 2_000;
  const warm = quick ? 1_000 : 3_000;
  const dir = mkdtempSync(join(tmpdir(), 'al-bench-call-path-'));
  const withPreload = { ...env, CALL_PATH_DIR: dir };
  const broker = await BrokerClient.connect({ dir: home });
  const restore = await allowedCallsTo(broker, SERVER);
  try {
    const sessions = { relay: session('relay', withPreload), airlock: session('airlock', withPreload) };
    for (const s of Object.values(sessions)) await s.init();
    const parts = { relay: PARTS.map(() => []), airlock: PARTS.map(() => []) };
    for (const m of ['relay', 'airlock']) for (let i = 0; i < warm; i++) await sessions[m].request('tools/call', { name: 'echo', arguments: { text: `warm ${i}` } });
    for (let block = 0; block < 4; block++) {
      for (const m of block % 2 ? ['airlock', 'relay'] : ['relay', 'airlock']) {
        const s = sessions[m];
        await noted(s.proc.pid, dir);
        await noted(serverOf(s), dir);
        const sent = [];
        const received = [];
        for (let i = 0; i < calls / 4; i++) {
          sent.push(clock());
          await s.request('tools/call', { name: 'echo', arguments: { text: `call ${i}` } });
          received.push(clock());
        }
        const got = split(sent, received, await noted(s.proc.pid, dir));
        got[PARTS.length - 1] = serverOwn(await noted(serverOf(s), dir));
        for (let p = 0; p < PARTS.length; p++) parts[m][p].push(...got[p]);
        // the broker files what it took in once the calls stop: not while the relay is measured
        if (m === 'airlock') await settled(broker);
      }
    }
    for (const s of Object.values(sessions)) await s.close();
    const f = (x) => x.toFixed(0);
    return PARTS.map((name, p) => {
      const r = quantile(parts.relay[p], 0.5);
      const a = quantile(parts.airlock[p], 0.5);
      const n = Math.min(parts.relay[p].length, parts.airlock[p].length);
      const more = Math.round(a) - Math.round(r);
      return [`one call at a time: ${name} (µs, median of ${n})`, '–', f(r), f(a), `${more >= 0 ? '+' : ''}${more} µs`, '(for information)'];
    });
  } finally {
    await restore();
    broker.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  await withOwnBroker('al-bench-call-path-', async ({ home, env }) => {
    const rows = await callPathRows({ home, env, quick: process.argv.includes('--quick') });
    process.stdout.write(`| measure | direct | byte relay | airlock wrap | airlock vs baseline | target |\n|---|---|---|---|---|---|\n${rows.map((r) => `| ${r.join(' | ')} |`).join('\n')}\n`);
  });
}
