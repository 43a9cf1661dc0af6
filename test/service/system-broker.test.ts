/**
 * Hardened mode for real: `airlock daemon --system` as a service user of its own, and an agent (an ordinary user
 * in the users group) that can use the broker but not touch it. Ground truth from the file system and the
 * process table, not from what Airlock says about itself.
 */
import { chmodSync, chownSync, lstatSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { systemEndpoint, type ServiceMarker } from '../../proxy-core/src/ipc/system.js';
import { cleanup, CLI, type Daemon, decisionOf, FIXTURE_SERVER, processAlive, startDaemon, tempDir, waitForTicket } from '../helpers/airlock.js';
import { accountName, asUser, assertRoot, cliAs, id, makeGroup, makeUser, runAs } from '../helpers/accounts.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

let service: string;
let agent: string;
let usersGroup: string;
let gid: number;
let serviceUid: number;
let base: string;
let data: string;
let run: string;
let root: string;
let daemon: Daemon;
let marker: ServiceMarker;
/** The agent's environment: the staged root's marker says the service is installed. */
let agentEnv: NodeJS.ProcessEnv;

/** A folder chain root's, readable by all, as /etc/airlock is. */
function rootFolder(path: string): void {
  mkdirSync(path, { recursive: true, mode: 0o755 });
  chmodSync(path, 0o755);
}

beforeAll(async () => {
  assertRoot();
  usersGroup = accountName('alu');
  service = accountName('als');
  agent = accountName('ala');
  gid = makeGroup(usersGroup);
  serviceUid = makeUser(service, [usersGroup]);
  makeUser(agent, [usersGroup]);
  base = tempDir('al-sys-');
  chmodSync(base, 0o755);
  // the data dir is the service user's (install makes it); the run folder too (systemd's RuntimeDirectory does)
  data = join(base, 'data');
  run = join(base, 'run');
  for (const d of [data, run]) {
    mkdirSync(d, { mode: 0o700 });
    chownSync(d, serviceUid, serviceUid);
  }
  root = join(base, 'root');
  rootFolder(join(root, 'etc', 'airlock'));
  marker = { version: 1, user: service, uid: serviceUid, usersGroup, gid, dataDir: data, runDir: run };
  writeFileSync(join(root, 'etc', 'airlock', 'service.json'), JSON.stringify(marker), { mode: 0o644 });
  const agentHome = join(base, 'agent-home');
  mkdirSync(agentHome, { mode: 0o700 });
  chownSync(agentHome, id('-u', agent), id('-g', agent));
  agentEnv = { HOME: agentHome, AIRLOCK_SYSTEM_ROOT: root };
  daemon = await startDaemon('/nonexistent', ['--system', '--home', data, '--run-dir', run, '--users-group', usersGroup, '--ticket-timeout', '60'], { HOME: data }, true, asUser(service));
}, 30_000);

afterAll(cleanup);

/** What the agent gets for each attempt: 'ok' or the error's code, from a script run as the agent. */
async function attemptsAsAgent(script: string): Promise<Record<string, string>> {
  const r = await runAs(agent, [process.execPath, '--input-type=module', '-e', script], agentEnv);
  if (r.code !== 0) throw new Error(`the agent's script failed: ${r.stderr}`);
  return JSON.parse(r.stdout) as Record<string, string>;
}

describe('the broker as its own user', () => {
  test('it runs as the service user, and its files are laid out as the modes say', () => {
    // the process table's owner of the broker's pid is the service user (setpriv exec'd node in place)
    expect(lstatSync(`/proc/${daemon.proc.pid}`).uid).toBe(serviceUid);
    expect(readFileSync(`/proc/${daemon.proc.pid}/status`, 'utf8')).toMatch(new RegExp(`^Uid:\\s+${serviceUid}\\s+${serviceUid}\\s+${serviceUid}\\s+${serviceUid}$`, 'm'));
    expect(daemon.stderr()).toContain(`socket ${join(run, 'broker.sock')}`);
    const mode = (p: string) => lstatSync(p).mode & 0o7777;
    expect(mode(data)).toBe(0o700);
    expect(lstatSync(join(data, 'airlock.db')).uid).toBe(serviceUid);
    expect(mode(join(data, 'airlock.db')) & 0o077).toBe(0);
    expect(mode(join(data, 'secret'))).toBe(0o600);
    expect([mode(run), lstatSync(run).uid, lstatSync(run).gid]).toEqual([0o750, serviceUid, gid]);
    const sock = lstatSync(join(run, 'broker.sock'));
    expect([sock.isSocket(), sock.mode & 0o7777, sock.uid, sock.gid]).toEqual([true, 0o660, serviceUid, gid]);
    const secret = lstatSync(join(run, 'secret'));
    expect([secret.mode & 0o7777, secret.uid, secret.gid]).toEqual([0o640, serviceUid, gid]);
  });

  test('the agent reads, denies and stops everything through it', async () => {
    const status = await cliAs(agent, ['status', '--json'], agentEnv);
    expect(status.code, status.stderr).toBe(0);
    expect(JSON.parse(status.stdout)).toMatchObject({ estop: false });

    // a wrapper the agent runs reports to the system broker; its held call is denied by the agent's CLI
    const transport = new StdioClientTransport({
      command: 'setpriv',
      args: [...asUser(agent).slice(1), process.execPath, CLI, 'wrap', '--name', 'fixture', '--client', 'test-client', '--', process.execPath, FIXTURE_SERVER],
      env: { PATH: process.env.PATH!, ...(agentEnv as Record<string, string>) },
      stderr: 'pipe',
    });
    const client = new Client({ name: 'airlock-test', version: '1.0.0' }, { capabilities: {} });
    await client.connect(transport);
    try {
      const call = client.callTool({ name: 'delete_all', arguments: {} });
      const ticket = await waitForTicket({ dir: data, endpoint: systemEndpoint(marker) }, 'delete_all');
      const pending = await cliAs(agent, ['pending', '--json'], agentEnv);
      expect(pending.code, pending.stderr).toBe(0);
      expect((JSON.parse(pending.stdout) as { id: string }[]).map((t) => t.id)).toEqual([ticket.id]);
      // loosening needs a proof the broker verifies: the agent's approve is refused, and the call still waits
      const approved = await cliAs(agent, ['approve', ticket.id], agentEnv);
      expect(approved.code).not.toBe(0);
      expect(approved.stderr).toMatch(/needs your presence, and this request came from a process without a terminal/);
      const denied = await cliAs(agent, ['deny', ticket.id], agentEnv);
      expect(denied.code, denied.stderr).toBe(0);
      expect(decisionOf(await call)).toMatchObject({ decision: 'deny', decidedBy: 'user', ticketId: ticket.id });
    } finally {
      await client.close();
    }

    const on = await cliAs(agent, ['estop', 'on'], agentEnv);
    expect(on.code, on.stderr).toBe(0);
    // the agent's own AIRLOCK_HOME is passed over for the service: the E-Stop it sees is the system broker's
    const own = await cliAs(agent, ['estop', 'status', '--json'], { ...agentEnv, AIRLOCK_HOME: join(base, 'agent-home') });
    expect(own.code, own.stderr).toBe(0);
    expect(JSON.parse(own.stdout)).toEqual({ estop: true });
    expect(own.stderr).toContain('the Airlock service is installed');
    const off = await cliAs(agent, ['estop', 'off'], agentEnv);
    expect(off.code).not.toBe(0);
    expect(off.stderr).toMatch(/needs your presence/);
  });

  test('the agent can neither change, read, remove nor replace the broker\'s files, nor kill it', async () => {
    const before = Object.fromEntries(readdirSync(data).map((n) => [n, lstatSync(join(data, n)).ino]));
    const pid = daemon.proc.pid!;
    const tryAll = `
      import * as fs from 'node:fs';
      import * as net from 'node:net';
      const out = {};
      const attempt = (name, fn) => { try { fn(); out[name] = 'ok'; } catch (e) { out[name] = e.code ?? String(e); } };
      const data = ${JSON.stringify(data)}, run = ${JSON.stringify(run)};
      attempt('readDatabase', () => fs.readFileSync(data + '/airlock.db'));
      attempt('listData', () => fs.readdirSync(data));
      attempt('writeSecret', () => fs.writeFileSync(data + '/secret', 'x'));
      attempt('removeDatabase', () => fs.unlinkSync(data + '/airlock.db'));
      attempt('removeData', () => fs.rmSync(data, { recursive: true }));
      attempt('chmodData', () => fs.chmodSync(data, 0o777));
      attempt('readRunSecret', () => fs.readFileSync(run + '/secret'));
      attempt('writeRunSecret', () => fs.writeFileSync(run + '/secret', 'x'));
      attempt('renameRunSecret', () => fs.renameSync(run + '/secret', run + '/old'));
      attempt('removeSocket', () => fs.unlinkSync(run + '/broker.sock'));
      attempt('newFileInRun', () => fs.writeFileSync(run + '/planted', 'x'));
      attempt('chmodSocket', () => fs.chmodSync(run + '/broker.sock', 0o666));
      attempt('kill9', () => process.kill(${pid}, 'SIGKILL'));
      attempt('term', () => process.kill(${pid}, 'SIGTERM'));
      out.bindOwnSocket = await new Promise((resolve) => {
        const s = net.createServer();
        s.once('error', (e) => resolve(e.code));
        s.listen(run + '/evil.sock', () => { s.close(); resolve('ok'); });
      });
      process.stdout.write(JSON.stringify(out));
    `;
    const got = await attemptsAsAgent(tryAll);
    expect(got).toEqual({
      readDatabase: 'EACCES',
      listData: 'EACCES',
      writeSecret: 'EACCES',
      removeDatabase: 'EACCES',
      removeData: 'EACCES',
      chmodData: 'EPERM',
      readRunSecret: 'ok',
      writeRunSecret: 'EACCES',
      renameRunSecret: 'EACCES',
      removeSocket: 'EACCES',
      newFileInRun: 'EACCES',
      chmodSocket: 'EPERM',
      kill9: 'EPERM',
      term: 'EPERM',
      bindOwnSocket: 'EACCES',
    });
    // and the shell's own kill says the same
    const kill = await runAs(agent, ['kill', '-9', String(pid)]);
    expect(kill.code).not.toBe(0);
    expect(kill.stderr).toMatch(/not permitted/i);
    // ground truth: the broker lives, its files are the same files
    expect(processAlive(pid)).toBe(true);
    expect(Object.fromEntries(readdirSync(data).map((n) => [n, lstatSync(join(data, n)).ino]))).toEqual(before);
    expect(readdirSync(run).sort()).toEqual(['broker.sock', 'secret']);
    expect((await cliAs(agent, ['status', '--json'], agentEnv)).code).toBe(0);
  });

  test("the agent cannot start a broker of its own, and a marker it could have written is refused", async () => {
    const ownDaemon = await cliAs(agent, ['daemon'], { ...agentEnv, AIRLOCK_HOME: join(base, 'agent-home', 'airlock') });
    expect(ownDaemon.code).not.toBe(0);
    expect(ownDaemon.stderr).toContain('the Airlock service is installed');

    // a staged root the agent owns: its marker is not believed, and the CLI fails closed rather than use it
    const fake = join(base, 'agent-home', 'root');
    const r = await runAs(agent, ['sh', '-c', `mkdir -p ${fake}/etc/airlock && cp ${join(root, 'etc', 'airlock', 'service.json')} ${fake}/etc/airlock/`], agentEnv);
    expect(r.code, r.stderr).toBe(0);
    const refused = await cliAs(agent, ['status'], { ...agentEnv, AIRLOCK_SYSTEM_ROOT: fake });
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toMatch(/not trustworthy: .* belongs to uid \d+/);
  });

  test('someone outside the users group cannot use it', async () => {
    const outsider = accountName('alo');
    makeUser(outsider);
    const r = await cliAs(outsider, ['status'], { AIRLOCK_SYSTEM_ROOT: root, HOME: '/nonexistent' });
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/permission denied|EACCES/i);
  });
});
