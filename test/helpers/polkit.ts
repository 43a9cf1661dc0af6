/**
 * A real polkitd on a private system bus, for the presence tests: dbus-daemon with a config of its own (a socket
 * in a temporary folder, nobody else's bus touched), polkitd on it with Airlock's action installed and a rules
 * file these tests control, and subject processes run as a non-root user (polkit authorizes root for
 * everything, so a root subject would prove nothing).
 *
 * The rules answer, for `airlock-person` only, what the test wrote for that subject's pid (`verdict`), so tests
 * never rewrite the rules under a running polkitd: "yes" YES, "no" NO, "auth" AUTH_SELF (what the shipped
 * default asks of an active session: a password, through an agent); nothing written falls to the action's
 * defaults. (polkitd reads it with `cat`, as its own user.)
 *
 * Needs root (users, /etc/polkit-1, /usr/share/polkit-1) and the binaries; `polkitUnavailable()` says which is
 * missing. Readiness is polkitd's own log line, never a sleep.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { peerOf, type Peer } from '../../proxy-core/src/ipc/peer.js';
import { installPolkitPolicy } from '../../proxy-core/src/broker/presence/polkit-policy.js';
import { assertCheckoutReachable } from './accounts.js';

export const PERSON = 'airlock-person';
const POLKITD = '/usr/lib/polkit-1/polkitd';
// one file per test process: two suites side by side each add their own, and each answers only its own pids
const RULES = `/etc/polkit-1/rules.d/49-airlock-test-${process.pid}.rules`;

const rulesText = (verdicts: string) => `// Airlock's presence tests: answers what the test wrote for the subject's pid, for ${PERSON} only
polkit.addRule(function (action, subject) {
  if (action.id !== "dev.airlock.loosen" || subject.user !== "${PERSON}") return polkit.Result.NOT_HANDLED;
  var v = "";
  try { v = polkit.spawn(["cat", "${verdicts}/" + subject.pid]).trim(); } catch (e) { return polkit.Result.NOT_HANDLED; }
  if (v === "yes") return polkit.Result.YES;
  if (v === "no") return polkit.Result.NO;
  if (v === "auth") return polkit.Result.AUTH_SELF;
  return polkit.Result.NOT_HANDLED;
});
`;

const onPath = (name: string) => spawnSync('sh', ['-c', `command -v ${name}`]).status === 0;

/** Why a real polkitd cannot run here; null when it can. */
export function polkitUnavailable(): string | null {
  if (process.platform !== 'linux') return 'polkit is Linux only';
  if (!existsSync(POLKITD)) return `${POLKITD} is missing (apt-get install polkitd)`;
  for (const bin of ['dbus-daemon', 'pkcheck', 'setpriv']) if (!onPath(bin)) return `${bin} is missing`;
  if (process.getuid?.() !== 0) return 'needs root: it adds a user and installs polkit rules and an action';
  return null;
}

function ensurePerson(): { uid: number; gid: number } {
  const id = (flag: string) => spawnSync('id', [flag, PERSON], { encoding: 'utf8' });
  if (id('-u').status !== 0) {
    const made = spawnSync('useradd', ['-m', PERSON], { encoding: 'utf8' });
    if (made.status !== 0 && id('-u').status !== 0) throw new Error(`useradd ${PERSON}: ${made.stderr}`);
  }
  assertCheckoutReachable(PERSON);
  return { uid: Number(id('-u').stdout.trim()), gid: Number(id('-g').stdout.trim()) };
}

/** Resolve with the first match of `re` in what `child` writes (stdout and stderr); reject when it exits first. */
function waitForOutput(child: ChildProcess, re: RegExp, what: string): Promise<RegExpMatchArray> {
  return new Promise((resolve, reject) => {
    let seen = '';
    const look = (d: Buffer) => {
      seen += d.toString('utf8');
      const m = re.exec(seen);
      if (m) {
        child.stdout?.off('data', look);
        child.stderr?.off('data', look);
        resolve(m);
      }
    };
    child.stdout?.on('data', look);
    child.stderr?.on('data', look);
    child.once('exit', (code) => reject(new Error(`${what} exited (${code}) before it was ready: ${seen.slice(-500)}`)));
    child.once('error', reject);
  });
}

/** A process run as PERSON that connected to the test server: its peer as the broker sees it. */
export interface Subject {
  peer: Peer;
  child: ChildProcess;
  /** End the subject and wait until it has exited. */
  end(): Promise<void>;
}

export interface Polkit {
  person: { name: string; uid: number; gid: number };
  /** DBUS_SYSTEM_BUS_ADDRESS of the private bus (also set in this process while it runs). */
  address: string;
  /** What the rules answer for the process `pid` (of PERSON) from now on. */
  verdict(pid: number, answer: 'yes' | 'no' | 'auth'): void;
  /** Start a Node process as PERSON that connects to this process's Unix socket; resolves with its peer. */
  subject(): Promise<Subject>;
  /** Run `node -e code` as PERSON, on the private bus; resolves with its stdout and exit status. */
  runAsPerson(code: string, args?: string[]): Promise<{ status: number | null; stdout: string; stderr: string }>;
  stop(): Promise<void>;
}

const asPerson = (person: { uid: number; gid: number }) => ['--reuid', String(person.uid), '--regid', String(person.gid), '--init-groups'];

export async function startPolkit(): Promise<Polkit> {
  const person = { name: PERSON, ...ensurePerson() };
  const dir = mkdtempSync(join(tmpdir(), 'airlock-polkit-'));
  // polkitd (its own user) and the subject must reach the sockets in here
  chmodSync(dir, 0o755);
  const bus = join(dir, 'system_bus_socket');
  writeFileSync(
    join(dir, 'bus.conf'),
    `<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>system</type>
  <listen>unix:path=${bus}</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow user="*"/>
    <allow own="*"/>
    <allow send_destination="*"/>
    <allow receive_sender="*"/>
  </policy>
</busconfig>
`,
  );
  const children: ChildProcess[] = [];
  let server: Server | undefined;
  const priorAddress = process.env.DBUS_SYSTEM_BUS_ADDRESS;
  const stop = async () => {
    for (const c of children.reverse()) {
      if (c.exitCode === null && c.signalCode === null) {
        const gone = new Promise((r) => c.once('exit', r));
        c.kill('SIGTERM');
        await gone;
      }
    }
    server?.close();
    rmSync(RULES, { force: true });
    rmSync(dir, { recursive: true, force: true });
    if (priorAddress === undefined) delete process.env.DBUS_SYSTEM_BUS_ADDRESS;
    else process.env.DBUS_SYSTEM_BUS_ADDRESS = priorAddress;
  };

  try {
    const daemon = spawn('dbus-daemon', ['--config-file', join(dir, 'bus.conf'), '--nofork', '--print-address=1'], { stdio: ['ignore', 'pipe', 'pipe'] });
    children.push(daemon);
    const address = (await waitForOutput(daemon, /^(unix:[^\n]+)\n/m, 'dbus-daemon'))[1]!;
    process.env.DBUS_SYSTEM_BUS_ADDRESS = address;

    // the rules and the action are in place before polkitd reads them, so it never reloads under a test
    const verdicts = join(dir, 'verdicts');
    mkdirSync(verdicts, { mode: 0o755 });
    writeFileSync(RULES, rulesText(verdicts), { mode: 0o644 });
    // Airlock's own action, as `airlock service install` writes it; left installed (another suite may use it)
    const installed = installPolkitPolicy();
    if (!installed.installed) throw new Error(installed.reason);

    // without --no-debug polkitd logs to stdout, and says when it owns its name on the bus
    const polkitd = spawn(POLKITD, [], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, DBUS_SYSTEM_BUS_ADDRESS: address } });
    children.push(polkitd);
    await waitForOutput(polkitd, /Acquired the name org\.freedesktop\.PolicyKit1/, 'polkitd');
    polkitd.stdout?.resume();
    polkitd.stderr?.resume();

    // the subjects' server: reachable by PERSON, reading each peer as soon as it connects (as the broker does)
    const sock = join(dir, 'subjects.sock');
    const arrivals: ((peer: Peer | null, socket: Socket) => void)[] = [];
    const subjects = createServer((socket) => {
      const peer = peerOf(socket);
      socket.on('error', () => {});
      arrivals.shift()?.(peer, socket);
    });
    server = subjects;
    await new Promise<void>((resolve) => subjects.listen({ path: sock, readableAll: true, writableAll: true }, resolve));

    const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: dir, DBUS_SYSTEM_BUS_ADDRESS: address };
    const subjectCode = `const s=require('net').createConnection(process.argv[1]);s.on('end',()=>process.exit(0));s.on('error',()=>process.exit(1));`;

    const subject = async (): Promise<Subject> => {
      const arrived = new Promise<{ peer: Peer | null; socket: Socket }>((resolve) => arrivals.push((peer, socket) => resolve({ peer, socket })));
      const child = spawn('setpriv', [...asPerson(person), process.execPath, '-e', subjectCode, sock], { stdio: ['ignore', 'ignore', 'inherit'], env });
      children.push(child);
      const { peer, socket } = await arrived;
      if (!peer) throw new Error('the subject connected but its peer is unknown (is the native addon built?)');
      const exited = new Promise<void>((resolve) => (child.exitCode !== null ? resolve() : child.once('exit', () => resolve())));
      return {
        peer,
        child,
        end: async () => {
          socket.end();
          await exited;
        },
      };
    };

    const runAsPerson = (code: string, args: string[] = []) =>
      new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve) => {
        const child = spawn('setpriv', [...asPerson(person), process.execPath, '--input-type=module', '-e', code, ...args], { stdio: ['ignore', 'pipe', 'pipe'], env });
        let stdout = '';
        let stderr = '';
        child.stdout.on('data', (d: Buffer) => (stdout += d.toString('utf8')));
        child.stderr.on('data', (d: Buffer) => (stderr += d.toString('utf8')));
        child.on('close', (status) => resolve({ status, stdout, stderr }));
      });

    const verdict = (pid: number, answer: 'yes' | 'no' | 'auth') => writeFileSync(join(verdicts, String(pid)), answer, { mode: 0o644 });

    return { person, address, verdict, subject, runAsPerson, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
