/**
 * The UI host against what a process beside it can do: replay the session cookie (which the browser hands to
 * every loopback port) with a forged Host and Origin, reuse a sign-in link, sign in over and over to push the
 * person out, and open thousands of TCP connections to the UI port. The broker's own state (E-Stop, rules, via
 * the CLI) and the fixture server's log of what it executed are the ground truth.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import { BrokerClient } from '../../proxy-core/src/ipc/client.js';
import { cleanup, cli, cliJson, executedCalls, onCleanup, tempDir, textOf, waitFor } from '../helpers/airlock.js';
import { startAirlock, startUiAirlock, wrapFixture } from '../helpers/e2e.js';
import { signIn, type UiSignIn } from '../helpers/ui-sign-in.js';

afterEach(cleanup);

/** `airlock daemon --ui` in `home` (on `port`, any free one unless given). */
const uiDaemon = (home: string, port = 0) => startUiAirlock({ home, port });

const estopOn = async (home: string) => (await cliJson<{ estop: boolean }>(home, ['estop', 'status', '--json'])).estop;
const rules = (home: string) => cliJson<{ action: string; server: string; tool: string }[]>(home, ['rules', '--json']);

/** A POST as the page sends it, with these headers in place of the page's. */
const post = (origin: string, path: string, body: unknown, headers: Record<string, string>) =>
  fetch(`${origin}${path}`, { method: 'POST', headers: { 'Content-Type': 'application/json', Origin: origin, ...headers }, body: JSON.stringify(body) });

describe('the session cookie alone', () => {
  test('replayed with a forged Host and Origin, it cannot turn E-Stop off, add allow * * or read the journal', async () => {
    const home = tempDir();
    const ui = await uiDaemon(home);
    const person = await signIn(ui.link);
    expect((await cli(home, ['estop', 'on'])).code).toBe(0);
    // what a listener on another loopback port gets from the browser: the cookie, nothing else
    const stolen = { Cookie: person.cookie, Host: `127.0.0.1:${ui.port}` };
    const attempts = [
      await post(ui.origin, '/api/call/estop', { on: false }, stolen),
      await post(ui.origin, '/api/call/rules.add', { action: 'allow', server: '*', tool: '*' }, stolen),
      await post(ui.origin, '/api/call/history', {}, stolen),
      await post(ui.origin, '/api/call/events', { since: 0 }, stolen),
      await post(ui.origin, '/api/events/ticket', {}, stolen),
      await fetch(`${ui.origin}/api/events?since=0`, { headers: stolen }),
      // the cookie's own value, or the cookie's session's value, sent as the key
      await post(ui.origin, '/api/call/estop', { on: false }, { ...stolen, 'X-Airlock-Key': person.cookie.split('=')[1]! }),
    ];
    for (const res of attempts) {
      expect(res.status, res.url).toBe(401);
      const text = await res.text();
      expect(text).not.toContain('estop-on');
      expect(text).not.toContain(person.key);
    }
    // nothing a cookie-only request can load holds the key
    const page = await fetch(`${ui.origin}/`, { headers: stolen });
    expect(await page.text()).not.toContain(person.key);
    expect(await estopOn(home)).toBe(true);
    expect((await rules(home)).some((r) => r.action === 'allow' && r.server === '*')).toBe(false);
    // the page itself, with its key, still can
    const mine = await post(ui.origin, '/api/call/estop', { on: false }, person.headers);
    expect(mine.status).toBe(200);
    expect(await estopOn(home)).toBe(false);
  });

  test('a signed-in page cannot mint sign-in links over HTTP', async () => {
    const home = tempDir();
    const ui = await uiDaemon(home);
    const person = await signIn(ui.link);
    const res = await post(ui.origin, '/api/call/ui.link', {}, person.headers);
    expect(res.status).toBe(403);
    expect(await res.text()).not.toContain('token=');
  });
});

describe('sign-in links', () => {
  test('the printed link works once; `airlock ui` prints a fresh one, which also works once', async () => {
    const home = tempDir();
    const ui = await uiDaemon(home);
    await signIn(ui.link);
    await expect(signIn(ui.link)).rejects.toThrow(/401/);
    const out = await cli(home, ['ui']);
    expect(out.code).toBe(0);
    const fresh = /^(http:\/\/localhost:\d+\/\?token=[A-Za-z0-9_-]{43})$/m.exec(out.stdout)![1]!;
    expect(fresh).not.toBe(ui.link);
    const s = await signIn(fresh);
    expect((await post(ui.origin, '/api/call/status', {}, s.headers)).status).toBe(200);
    await expect(signIn(fresh)).rejects.toThrow(/401/);
  });

  test('`airlock ui --open` hands the link to the OS opener as one argument, with no shell', async () => {
    const home = tempDir();
    const ui = await uiDaemon(home);
    const bin = tempDir('al-bin-');
    const record = join(bin, 'argv.json');
    // an xdg-open that records exactly the arguments it was given; it writes aside and renames, so the test
    // never reads a record that exists but is still empty (the opener runs detached, beside the test)
    const script = `const fs = require('fs'); const to = ${JSON.stringify(record)};\n`
      + `fs.writeFileSync(to + '.part', JSON.stringify(process.argv.slice(2))); fs.renameSync(to + '.part', to);\n`;
    writeFileSync(join(bin, 'xdg-open'), `#!${process.execPath}\n${script}`, { mode: 0o755 });
    const out = await cli(home, ['ui', '--open'], { PATH: `${bin}:${process.env.PATH}` });
    expect(out.code).toBe(0);
    await waitFor(() => existsSync(record), 10_000, 'the opener to run');
    const argv = JSON.parse(readFileSync(record, 'utf8')) as string[];
    expect(argv).toHaveLength(1);
    expect(argv[0]).toMatch(/^http:\/\/localhost:\d+\/\?token=[A-Za-z0-9_-]{43}$/);
    expect(out.stdout).toContain(argv[0]);
    const s = await signIn(argv[0]!);
    expect((await post(ui.origin, '/api/call/status', {}, s.headers)).status).toBe(200);
  });

  test('`airlock ui` against a broker without --ui says how to get one', async () => {
    const { home } = await startAirlock();
    const out = await cli(home, ['ui']);
    expect(out.code).toBe(1);
    expect(out.stderr).toMatch(/airlock daemon --ui/);
  });

  test('64 sign-ins by someone else do not push the person out: past the cap they are refused', async () => {
    const home = tempDir();
    const ui = await uiDaemon(home);
    const person = await signIn(ui.link);
    const broker = await BrokerClient.connect({ dir: home, role: 'cli' });
    onCleanup(() => broker.close());
    const statuses: number[] = [];
    for (let i = 0; i < 64; i++) {
      // whatever link someone else can get: a fresh one, or the printed one read from the daemon's log
      const url = await broker.call('ui.link', {}).then((r) => r.url, () => ui.link);
      statuses.push((await fetch(url, { redirect: 'manual' })).status);
    }
    const res = await post(ui.origin, '/api/call/estop', { on: true }, person.headers);
    expect(res.status).toBe(200);
    expect(await estopOn(home)).toBe(true);
    expect(statuses.filter((s) => s === 303)).toHaveLength(31); // 32 sessions in all, the person's among them
    expect(statuses.filter((s) => s === 503)).toHaveLength(33);
  }, 120_000);

  test('a signed-in page keeps working across a broker restart on the same port', async () => {
    const home = tempDir();
    const first = await uiDaemon(home);
    const person: UiSignIn = await signIn(first.link);
    await first.daemon.stop();
    const again = await uiDaemon(home, first.port);
    const res = await post(again.origin, '/api/call/estop', { on: true }, person.headers);
    expect(res.status).toBe(200);
    expect(await estopOn(home)).toBe(true);
    // and the cookie alone still opens nothing
    expect((await post(again.origin, '/api/call/estop', { on: false }, { Cookie: person.cookie })).status).toBe(401);
    expect(await estopOn(home)).toBe(true);
  });
});

/** Open `n` raw TCP connections to the port and keep them (sending nothing); resolves once each has connected or failed. */
async function flood(port: number, n: number): Promise<{ sockets: Socket[]; closed: () => number }> {
  const sockets: Socket[] = [];
  let closed = 0;
  await Promise.all(
    Array.from(
      { length: n },
      () =>
        new Promise<void>((resolve) => {
          const s = connect(port, '127.0.0.1');
          sockets.push(s);
          s.on('connect', () => resolve());
          s.on('error', () => resolve());
          s.on('close', () => {
            closed++;
            resolve();
          });
          s.setTimeout(20_000, () => resolve());
        }),
    ),
  );
  return { sockets, closed: () => closed };
}

describe('connections to the UI port', () => {
  for (const [n, handles] of [
    [400, 384],
    [5000, 1024],
  ] as const) {
    test(`${n} held TCP connections (the broker held to ${handles} file handles) leave wrapped calls, E-Stop and the UI working`, async () => {
      const home = tempDir();
      const ui = await uiDaemon(home);
      // a broker with few handles: what a small default limit is (the soft and the hard one)
      execFileSync('prlimit', ['--pid', String(ui.daemon.proc.pid), `--nofile=${handles}:${handles}`]);
      expect((await cli(home, ['rules', 'add', 'allow', '--server', 'fixture', '--tool', 'echo'])).code).toBe(0);
      const held = await flood(ui.port, n);
      try {
        // a wrapper started now, and its call, go through
        const { fx, w } = await wrapFixture(home);
        const result = await w.client.callTool({ name: 'echo', arguments: { text: 'during' } });
        expect(textOf(result)).toContain('during');
        expect(executedCalls(fx.log, 'echo')).toHaveLength(1);
        // E-Stop from the CLI, and it holds: the next call is refused and never executed
        expect((await cli(home, ['estop', 'on'])).code).toBe(0);
        const refused = await w.client.callTool({ name: 'echo', arguments: { text: 'stopped' } });
        expect(refused.isError).toBe(true);
        expect(executedCalls(fx.log, 'echo')).toHaveLength(1);
        // the person can still sign in and call the API
        const { url } = await cliJson<{ url: string }>(home, ['ui', '--json']);
        const person = await signIn(url);
        expect((await post(ui.origin, '/api/call/estop', { on: false }, person.headers)).status).toBe(200);
        expect(await estopOn(home)).toBe(false);
      } finally {
        for (const s of held.sockets) s.destroy();
      }
      expect(ui.daemon.proc.exitCode).toBeNull();
    }, 120_000);
  }
});
