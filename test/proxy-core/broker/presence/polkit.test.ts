import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createConnection, createServer } from 'node:net';
import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { checkPolkit, MAX_STATEMENT } from '../../../../proxy-core/src/broker/presence/polkit.js';
import { peerOf, type Peer } from '../../../../proxy-core/src/ipc/peer.js';
import { ROOT } from '../../../helpers/airlock.js';
import { polkitUnavailable, startPolkit, type Polkit } from '../../../helpers/polkit.js';

const somePeer: Peer = { pid: process.pid, uid: 1000, gid: 1000, exe: null, tty: false, startTime: '1' };

describe('checkPolkit fails closed before polkit is asked', () => {
  const dir = mkdtempSync(join(tmpdir(), 'airlock-pkcheck-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  test('no pkcheck: not ok, and the reason says polkit is not available', async () => {
    const answer = await checkPolkit(somePeer, 'approve', { pkcheck: join(dir, 'no-such-pkcheck') });
    expect(answer.ok).toBe(false);
    expect(answer.reason).toMatch(/^polkit refused: polkit is not available/);
  });

  test('a peer without a start time is never put to polkit (the pid alone could be anyone by now)', async () => {
    const answer = await checkPolkit({ ...somePeer, startTime: null }, 'approve');
    expect(answer).toEqual({ ok: false, reason: "polkit refused: the calling process's start time is not known" });
  });

  test('a statement too long to read, or holding NUL, is refused', async () => {
    expect((await checkPolkit(somePeer, 'x'.repeat(MAX_STATEMENT + 1))).reason).toMatch(/longer than/);
    expect((await checkPolkit(somePeer, 'a\0b')).reason).toMatch(/NUL/);
  });

  test('no answer within the timeout: not ok, and the waiting pkcheck is ended', async () => {
    const pidFile = join(dir, 'pid');
    const slow = join(dir, 'slow-pkcheck');
    writeFileSync(slow, `#!/bin/sh\necho $$ > ${pidFile}\nexec sleep 60\n`);
    chmodSync(slow, 0o755);
    const answer = await checkPolkit(somePeer, 'approve', { pkcheck: slow, timeoutMs: 300 });
    expect(answer).toEqual({ ok: false, reason: 'polkit refused: no answer within 300 ms' });
    const pid = Number(readFileSync(pidFile, 'utf8'));
    // ended by the timeout (SIGTERM is delivered at once; a zombie awaits its reaping by Node)
    await expect.poll(() => spawnSync('ps', ['-o', 'stat=', '-p', String(pid)], { encoding: 'utf8' }).stdout.trim().replace(/^Z.*/, '')).toBe('');
  });

  test('what pkcheck exits with maps to a clear no; only 0 is ok', async () => {
    for (const [status, ok, reason] of [
      [0, true, /authorized/],
      [1, false, /^polkit refused: not authorized/],
      [2, false, /no authentication agent/],
      [3, false, /dismissed/],
      [126, false, /did not accept its arguments/],
      [127, false, /could not check/],
      [5, false, /exited with 5/],
    ] as const) {
      const fake = join(dir, `pkcheck-${status}`);
      writeFileSync(fake, `#!/bin/sh\necho "diagnostic $status" >&2\nexit ${status}\n`);
      chmodSync(fake, 0o755);
      const answer = await checkPolkit(somePeer, 'approve', { pkcheck: fake });
      expect(answer.ok, String(status)).toBe(ok);
      expect(answer.reason, String(status)).toMatch(reason);
    }
  });

  test('pkcheck gets the subject as pid,start,uid and (from root) the statement as one argument, never through a shell', async () => {
    const argsFile = join(dir, 'args');
    const fake = join(dir, 'pkcheck-args');
    writeFileSync(fake, `#!/bin/sh\nfor a in "$@"; do printf '%s\\n' "$a"; done > ${argsFile}\nexit 1\n`);
    chmodSync(fake, 0o755);
    const statement = 'approve `id` $(id); rm -rf ~';
    await checkPolkit({ ...somePeer, pid: 42, startTime: '777', uid: 1001 }, statement, { pkcheck: fake });
    expect(readFileSync(argsFile, 'utf8').split('\n').slice(0, -1)).toEqual([
      '--action-id',
      'dev.airlock.loosen',
      '--process',
      '42,777,1001',
      '--allow-user-interaction',
      // polkitd takes details from root only
      ...(process.getuid!() === 0 ? ['--detail', 'statement', statement] : []),
    ]);
    await checkPolkit({ ...somePeer, pid: 42, startTime: '777', uid: 1001 }, 's', { pkcheck: fake, interactive: false, actionId: 'x.y' });
    expect(readFileSync(argsFile, 'utf8')).not.toContain('--allow-user-interaction');
    expect(readFileSync(argsFile, 'utf8')).toContain('x.y');
  });
});

const unavailable = polkitUnavailable();

describe.skipIf(unavailable !== null)(`checkPolkit against a real polkitd${unavailable ? ` (skipped: ${unavailable})` : ''}`, () => {
  let polkit: Polkit;
  beforeAll(async () => {
    polkit = await startPolkit();
  }, 30_000);
  afterAll(() => polkit?.stop());

  test('polkitd knows the shipped action, with its defaults', () => {
    const shown = spawnSync('pkaction', ['--action-id', 'dev.airlock.loosen', '--verbose'], { encoding: 'utf8' });
    expect(shown.status).toBe(0);
    expect(shown.stdout).toMatch(/implicit any:\s+no/);
    expect(shown.stdout).toMatch(/implicit inactive:\s+no/);
    expect(shown.stdout).toMatch(/implicit active:\s+auth_self_keep/);
    expect(shown.stdout).toContain('Airlock');
  });

  test('a subject the rules allow: ok, end to end through peerOf', async () => {
    const subject = await polkit.subject();
    expect(subject.peer.uid).toBe(polkit.person.uid);
    // setpriv executes node in its own place: the peer is the process started
    expect(subject.peer.pid).toBe(subject.child.pid);
    expect(subject.peer.tty).toBe(false);
    polkit.verdict(subject.peer.pid, 'yes');
    expect(await checkPolkit(subject.peer, 'approve call 7')).toEqual({ ok: true, reason: 'polkit authorized the calling process' });
    await subject.end();
  });

  test('a subject the rules refuse: not ok, with polkit’s reason', async () => {
    const subject = await polkit.subject();
    polkit.verdict(subject.peer.pid, 'no');
    const answer = await checkPolkit(subject.peer, 'approve call 7');
    expect(answer.ok).toBe(false);
    expect(answer.reason).toMatch(/^polkit refused: not authorized/);
    await subject.end();
  });

  test('the shipped defaults, for a process with no terminal and no session (an agent’s shell): not ok', async () => {
    const subject = await polkit.subject();
    const answer = await checkPolkit(subject.peer, 'approve call 7');
    expect(answer.ok).toBe(false);
    expect(answer.reason).toMatch(/^polkit refused: not authorized/);
    await subject.end();
  });

  test('a password asked for (auth_self, as an active session’s default) with no agent to ask it: not ok', async () => {
    const subject = await polkit.subject();
    polkit.verdict(subject.peer.pid, 'auth');
    const answer = await checkPolkit(subject.peer, 'approve call 7');
    expect(answer).toMatchObject({ ok: false, reason: expect.stringMatching(/no authentication agent answered/) });
    expect((await checkPolkit(subject.peer, 'approve call 7', { interactive: false })).ok).toBe(false);
    await subject.end();
  });

  test('a subject whose process has exited: not ok, even where the rules would say yes', async () => {
    const subject = await polkit.subject();
    polkit.verdict(subject.peer.pid, 'yes');
    await subject.end();
    const answer = await checkPolkit(subject.peer, 'approve call 7');
    expect(answer.ok).toBe(false);
    expect(answer.reason).toMatch(/^polkit refused: polkit could not check/);
  });

  test('a pid whose start time differs (reused by another process): not ok', async () => {
    const subject = await polkit.subject();
    polkit.verdict(subject.peer.pid, 'yes');
    const answer = await checkPolkit({ ...subject.peer, startTime: String(Number(subject.peer.startTime) + 1) }, 'approve');
    expect(answer.ok).toBe(false);
    expect(answer.reason).toMatch(/has been replaced/);
    await subject.end();
  });

  test('root is out of reach: polkit authorizes a root peer whatever the rules say', async () => {
    const server = createServer();
    const seen = new Promise<Peer | null>((resolve) => server.once('connection', (s) => resolve(peerOf(s))));
    const dir = mkdtempSync(join(tmpdir(), 'airlock-root-'));
    const path = join(dir, 's');
    await new Promise<void>((resolve) => server.listen(path, resolve));
    const client = createConnection(path);
    const peer = (await seen)!;
    expect(peer.uid).toBe(0);
    polkit.verdict(peer.pid, 'no');
    expect((await checkPolkit(peer, 'approve')).ok).toBe(true);
    client.destroy();
    await new Promise((resolve) => server.close(resolve));
    rmSync(dir, { recursive: true, force: true });
  });

  test('a broker running as the person (the normal mode) checks its own user’s processes, and no one else’s', async () => {
    const subject = await polkit.subject();
    const module = join(ROOT, 'proxy-core', 'dist', 'broker', 'presence', 'polkit.js');
    const ask = (peer: Peer, statement: string) =>
      polkit.runAsPerson(
        `const { checkPolkit } = await import(process.argv[1]); process.stdout.write(JSON.stringify(await checkPolkit(JSON.parse(process.argv[2]), process.argv[3])));`,
        [module, JSON.stringify(peer), statement],
      );
    polkit.verdict(subject.peer.pid, 'yes');
    const own = await ask(subject.peer, 'approve call 7');
    expect(own.stderr).toBe('');
    expect(JSON.parse(own.stdout)).toEqual({ ok: true, reason: 'polkit authorized the calling process' });
    polkit.verdict(subject.peer.pid, 'no');
    expect(JSON.parse((await ask(subject.peer, 'approve call 7')).stdout).ok).toBe(false);
    // this test process runs as root: a non-root caller may not ask about another user's process
    const stat = readFileSync('/proc/self/stat', 'utf8');
    const start = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]!;
    const other = JSON.parse((await ask({ pid: process.pid, uid: 0, gid: 0, exe: null, tty: false, startTime: start }, 'approve')).stdout);
    expect(other.ok).toBe(false);
    expect(other.reason).toMatch(/could not check/);
    await subject.end();
  });
});
