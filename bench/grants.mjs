// Grants for `npm run bench` (also runnable alone: `node bench/grants.mjs [--quick]`):
//   - a grant's decision in the wrapper: CPU per decision of the policy stage with a 15-minute grant against
//     an ordinary allow rule (the same synchronous path, in the tick the call is read), and a wrapped call's
//     round trip under each, with a grant of N calls (spent through the broker) beside them
//   - a held call to its card visible in the page (the card with its grant choices; bench/ui.mjs's measure)
// Not a test: nothing here passes or fails.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { decide } from '../proxy-core/dist/policy/decide.js';
import { cardLatency } from './ui.mjs';
import { startBroker } from './own-broker.mjs';
import { CLI, FIXTURE, WRAP } from './paths.mjs';
import { median } from './stats.mjs';

const p90 = (xs) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * 0.9))];

/** CPU µs per decision of the policy stage with `rules`. */
function decideCpu(rules, n) {
  const policy = { version: 1, estop: false, rules, sessionAllows: [], trustReadOnlyHints: false, withdrawn: {} };
  const call = { server: 'bench', client: 'bench', tool: 'write_note', toolClass: 'mutating', args: { text: 'x' } };
  const now = Date.now();
  for (let i = 0; i < n / 10; i++) decide(call, policy, undefined, now);
  const t = process.cpuUsage();
  let allowed = 0;
  for (let i = 0; i < n; i++) if (decide(call, policy, undefined, now + i).action === 'allow') allowed++;
  const u = process.cpuUsage(t);
  if (allowed !== n) throw new Error('the bench policy did not allow');
  return (u.user + u.system) / n;
}

const cli = (home, args) => execFileSync(process.execPath, [CLI, ...args], { env: { ...process.env, AIRLOCK_HOME: home }, encoding: 'utf8' });

async function wrapped(home, name) {
  const transport = new StdioClientTransport({ command: process.execPath, args: [...WRAP, '--name', name, '--client', 'bench', '--', process.execPath, FIXTURE], env: { ...process.env, AIRLOCK_HOME: home }, stderr: 'ignore' });
  const client = new Client({ name: 'bench', version: '1' });
  await client.connect(transport);
  return client;
}

/** Hold one call of `client`, then approve its ticket with `flags` (a grant, or --always). */
async function grantFromTicket(home, client, flags) {
  const held = client.callTool({ name: 'write_note', arguments: { text: 'first' } });
  let ticket;
  for (let i = 0; i < 500 && !ticket; i++) {
    ticket = JSON.parse(cli(home, ['pending', '--json']))[0];
    if (!ticket) await new Promise((r) => setTimeout(r, 10));
  }
  cli(home, ['approve', ticket.id, ...flags]);
  await held;
}

async function roundTrips(client, n) {
  const ms = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    const r = await client.callTool({ name: 'write_note', arguments: { text: `n${i}` } });
    ms.push(performance.now() - t0);
    if (r.isError) throw new Error('a bench call was refused');
  }
  return ms;
}

export async function grantRows({ quick = false } = {}) {
  const f = (x, d = 2) => x.toFixed(d);
  const n = quick ? 20_000 : 200_000;
  const rule = { id: 'r1', action: 'allow', server: 'bench*', tool: 'write_note', createdAt: Date.now() };
  const ruleCpu = decideCpu([rule], n);
  const grantCpu = decideCpu([{ ...rule, expiresAt: Date.now() + 15 * 60_000 }], n);

  const calls = quick ? 100 : 400;
  const home = mkdtempSync(join(tmpdir(), 'al-grantbench-'));
  const d = await startBroker({ ...process.env, AIRLOCK_HOME: home });
  const clients = [];
  try {
    const byRule = await wrapped(home, 'bench-rule');
    const byTime = await wrapped(home, 'bench-time');
    const byCount = await wrapped(home, 'bench-count');
    clients.push(byRule, byTime, byCount);
    // hundreds of allowed writes in a row are what the tripwire stops: off while the decision is measured
    cli(home, ['settings', 'tripwire', 'off']);
    await grantFromTicket(home, byRule, ['--always']);
    await grantFromTicket(home, byTime, ['--for', '15m']);
    await grantFromTicket(home, byCount, ['--calls', String(calls + 30)]);
    // a warm-up round each (the first calls of a wrapper pay for its start), then alternating rounds
    for (const c of [byRule, byTime, byCount]) await roundTrips(c, 20);
    const rounds = { rule: [], time: [], count: [] };
    // alternating, so the three are measured under the same load
    for (let r = 0; r < 4; r++) {
      rounds.rule.push(...(await roundTrips(byRule, calls / 4)));
      rounds.time.push(...(await roundTrips(byTime, calls / 4)));
      rounds.count.push(...(await roundTrips(byCount, calls / 4)));
    }
    const tickets = JSON.parse(cli(home, ['pending', '--json'])).length;
    const lat = await cardLatency(quick);
    return [
      ['a grant\'s decision in the wrapper: policy stage CPU per call (µs)', `${f(ruleCpu)} (allow rule)`, f(grantCpu), `${f(grantCpu - ruleCpu)} µs more; synchronous, in the tick the call is read`, 'same tick as a rule'],
      [`wrapped call under a 15-minute grant (ms, p50 of ${calls})`, `${f(median(rounds.rule))} (allow rule)`, f(median(rounds.time)), `p90 ${f(p90(rounds.time))} against ${f(p90(rounds.rule))}; ${tickets} tickets`, 'as a rule'],
      [`wrapped call under a grant of N calls (ms, p50 of ${calls})`, `${f(median(rounds.rule))} (allow rule)`, f(median(rounds.count)), `${f(median(rounds.count) - median(rounds.rule))} ms against a rule: one round trip to the broker, which spends the call`, 'no overspend'],
      [`held call to card visible in the page (ms, p50 of ${lat.runs})`, `${f(median(lat.event), 1)} (event to an SSE reader)`, f(median(lat.card), 1), `p90 ${f(p90(lat.card), 1)} ms; the card with its grant choices`, 'p50 ≤ 150 ms'],
    ];
  } finally {
    for (const c of clients) await c.close().catch(() => {});
    await d.stop();
    rmSync(home, { recursive: true, force: true });
  }
}

export function grantTable(rows) {
  return ['| grants measure | baseline | airlock | comparison | target |', '|---|---|---|---|---|', ...rows.map((r) => `| ${r.join(' | ')} |`)].join('\n');
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  process.stdout.write(grantTable(await grantRows({ quick: process.argv.includes('--quick') })) + '\n');
}
