// What a presence proof adds to a person's yes: from the approval leaving the front end to the held call's answer
// reaching the MCP client, through a real wrapper and the fixture server. Three ways, each against its own broker:
//   click     — today's approve with no proof (`airlock daemon --no-presence`): the baseline;
//   proof     — the app's path: ask for a challenge, answer it with the app's MAC (the key handed over on fd 3), approve;
//   lease     — the next approve from the same front end within its presence lease (no new touch).
// The person's own time (reading, touching the sensor, typing a password) is not in it: only what Airlock adds.
// Not a test: nothing here passes or fails. Run alone with `node bench/presence.mjs`, or from run.mjs.
import { spawn } from 'node:child_process';
import { createHmac, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { rawSession } from './raw-session.mjs';
import { BrokerClient } from '../proxy-core/dist/ipc/client.js';
import { CLI, FIXTURE, WRAP } from './paths.mjs';
import { quantile } from './stats.mjs';

/** A broker in a fresh home: without proofs, or with them and the app's key on fd 3. */
async function broker(mode, appKey) {
  const home = mkdtempSync(join(tmpdir(), `al-bench-presence-${mode}-`));
  const env = { ...process.env, AIRLOCK_HOME: home };
  const args = mode === 'click' ? ['--no-presence'] : ['--app-key-fd', '3'];
  const proc = spawn(process.execPath, [CLI, 'daemon', ...args], { env, stdio: ['ignore', 'ignore', 'pipe', 'pipe'] });
  if (mode !== 'click') proc.stdio[3].end(appKey.toString('hex') + '\n');
  else proc.stdio[3].end();
  await new Promise((resolve, reject) => {
    let err = '';
    proc.stderr.on('data', (d) => {
      err += d;
      if (err.includes('broker running')) resolve();
    });
    proc.on('exit', () => reject(new Error(err)));
  });
  return {
    home,
    env,
    async stop() {
      proc.kill('SIGTERM');
      await new Promise((r) => proc.on('exit', r));
      rmSync(home, { recursive: true, force: true });
    },
  };
}

async function untilPending(client, known) {
  for (let i = 0; i < 5000; i++) {
    const t = (await client.call('pending', {})).find((x) => !known.has(x.id));
    if (t) return t;
    await new Promise((r) => setTimeout(r, 1));
  }
  throw new Error('presence bench: no ticket');
}

/** `rounds` held calls approved the given way; ms from the approval's start to the client reading the answer. */
async function measure(mode, rounds) {
  const appKey = randomBytes(32);
  const b = await broker(mode === 'click' ? 'click' : 'proof', appKey);
  const wrap = rawSession(process.execPath, [...WRAP, '--name', 'bench-presence', '--client', 'bench', '--', process.execPath, FIXTURE], { ...b.env, FIXTURE_LOG: join(b.home, 'fixture.log') });
  const client = await BrokerClient.connect({ dir: b.home, role: 'ui' });
  const out = [];
  const known = new Set();
  try {
    await wrap.init();
    for (let i = 0; i < rounds + 1; i++) {
      const answer = wrap.timedRequest('tools/call', { name: 'delete_all', arguments: { text: `round ${i}` } });
      const t = await untilPending(client, known);
      known.add(t.id);
      const start = performance.now();
      // the lease mode gives one proof first (round 0, not counted); then every approve rides the lease
      if (mode === 'click' || (mode === 'lease' && i > 0)) await client.call('approve', { id: t.id });
      else {
        const c = await client.call('presence.challenge', { method: 'approve', params: { id: t.id } });
        const mac = createHmac('sha256', appKey).update('airlock-presence:app-click:').update(Buffer.from(c.challenge, 'base64url')).digest('hex');
        await client.callWithProof('approve', { id: t.id }, { kind: 'app-click', challenge: c.id, mac });
      }
      const { m, at } = await answer;
      if (m.error || m.result?.isError) throw new Error(`presence bench: the approved call failed: ${JSON.stringify(m)}`);
      if (i > 0 || mode === 'click') out.push(at - start);
    }
  } finally {
    client.close();
    await wrap.close();
    await b.stop();
  }
  return out;
}

export async function presenceRows({ quick = false } = {}) {
  // under the tripwire's default of 30 changing calls in 10 s: each approval here is one
  const rounds = quick ? 10 : 25;
  const click = await measure('click', rounds);
  const proof = await measure('proof', rounds);
  const lease = await measure('lease', rounds);
  const med = (xs) => quantile(xs, 0.5);
  const p99 = (xs) => quantile(xs, 0.99);
  const f = (x) => x.toFixed(1);
  return [
    [
      'approve to the held call answered, p50 (ms): no proof (--no-presence) / the app\'s proof (challenge + MAC) / within a lease',
      '–',
      '–',
      `${f(med(click))} / ${f(med(proof))} / ${f(med(lease))}`,
      `${rounds} approvals each (under the tripwire's 30 in 10 s), real wrapper and fixture server; p99 ${f(p99(click))} / ${f(p99(proof))} / ${f(p99(lease))}; the proof adds ${f(med(proof) - med(click))} ms`,
      '≤ +300 ms over no proof',
    ],
  ];
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  for (const r of await presenceRows({ quick: process.argv.includes('--quick') })) process.stdout.write(`${r.join(' | ')}\n`);
}
