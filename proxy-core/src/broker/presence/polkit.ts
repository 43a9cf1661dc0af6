/**
 * A presence proof from the operating system: polkit is asked whether the process on the other end of the
 * broker's socket (its pid, start time and uid from the kernel: ipc/peer.ts) may perform Airlock's loosening
 * action. Under the shipped policy (build/polkit/dev.airlock.loosen.policy, polkit-policy.ts) that means the
 * person at an active local session types their own password into an authentication agent: the desktop's,
 * or the text agent `airlock` starts beside a terminal (cli/polkit-agent.ts). A same-user process without a
 * session or a terminal has no agent to answer for it, so the answer is no.
 *
 * The statement goes to polkit as the detail "statement" when the broker runs as root (rules and agents can
 * read it); polkit refuses details from anyone else, so a broker running as the person leaves it out.
 *
 * Root is out of reach of this proof: polkit authorizes uid 0 for every action, so a peer running as root is
 * always "ok". Whoever runs as root can rewrite Airlock's state anyway; the proof guards against same-user
 * processes, not against root.
 *
 * The subject is passed as pid,start-time,uid, never as a bare pid: polkit then refuses a process that is gone
 * or whose pid was reused ("process with PID … has been replaced"), and takes the uid the kernel gave rather
 * than reading it again. pkcheck runs from argv (no shell); every failure to get a clear yes is a no.
 */
import { spawn } from 'node:child_process';
import type { Peer } from '../../ipc/peer.js';
import { POLKIT_ACTION_ID } from './polkit-policy.js';

export interface PolkitAnswer {
  ok: boolean;
  reason: string;
}

export interface PolkitOptions {
  /** The polkit action asked about; Airlock's own unless a test names another. */
  actionId?: string;
  /** The pkcheck binary (found on PATH by default). */
  pkcheck?: string;
  /** How long a person may take to answer the agent's prompt; then the answer is no. */
  timeoutMs?: number;
  /** Let polkit ask the person through an authentication agent (default true). */
  interactive?: boolean;
}

/** A person types a password: two minutes, then the question lapses. */
const DEFAULT_TIMEOUT_MS = 120_000;
/** The statement is shown to the person; what is longer than this is not something to read in a dialog. */
export const MAX_STATEMENT = 4096;
/** Enough of pkcheck's diagnostics to say why; the rest is dropped. */
const MAX_OUTPUT = 8192;

const refused = (why: string): PolkitAnswer => ({ ok: false, reason: `polkit refused: ${why}` });

/** pkcheck's diagnostic on stderr (the first line of it), or a fallback. */
function diagnostic(stderr: string, fallback: string): string {
  const line = stderr
    .split('\n')
    .map((l) => l.trim())
    .find((l) => l !== '');
  return line ?? fallback;
}

/** What pkcheck's exit status means (pkcheck(1), RETURN VALUE). */
function answerFor(status: number | null, signal: NodeJS.Signals | null, stderr: string): PolkitAnswer {
  switch (status) {
    case 0:
      return { ok: true, reason: 'polkit authorized the calling process' };
    case 1:
      return refused(`not authorized (${diagnostic(stderr, 'Not authorized.')})`);
    case 2:
      return refused(
        `authentication is required and no authentication agent answered for the calling process (${diagnostic(stderr, 'no agent')}); run the command from a terminal or a desktop session`,
      );
    case 3:
      return refused('the authentication request was dismissed');
    case 126:
      return refused(`pkcheck did not accept its arguments (${diagnostic(stderr, 'exit 126')})`);
    case 127:
      return refused(`polkit could not check the calling process (${diagnostic(stderr, 'exit 127')})`);
    default:
      return refused(signal ? `pkcheck ended by ${signal}` : `pkcheck exited with ${status} (${diagnostic(stderr, 'no diagnostic')})`);
  }
}

/** Why this peer cannot be put to polkit at all; null when it can. */
function unfit(peer: Peer, statement: string): string | null {
  if (process.platform !== 'linux') return `polkit is not available on ${process.platform}`;
  if (!Number.isSafeInteger(peer.pid) || peer.pid <= 0 || !Number.isSafeInteger(peer.uid) || peer.uid < 0) {
    return 'the calling process is not known';
  }
  // without its start time polkit could be asked about whichever process holds the pid now
  if (peer.startTime === null || !/^\d+$/.test(peer.startTime)) return "the calling process's start time is not known";
  if (statement.length > MAX_STATEMENT) return `the statement is longer than ${MAX_STATEMENT} characters`;
  if (statement.includes('\0')) return 'the statement holds a NUL character';
  return null;
}

/**
 * Ask polkit whether `peer` may loosen Airlock, showing `statement` (what is being approved) to the person.
 * Resolves, never rejects: ok true only when pkcheck said yes.
 */
export async function checkPolkit(peer: Peer, statement: string, opts: PolkitOptions = {}): Promise<PolkitAnswer> {
  const why = unfit(peer, statement);
  if (why) return refused(why);
  const args = ['--action-id', opts.actionId ?? POLKIT_ACTION_ID, '--process', `${peer.pid},${peer.startTime},${peer.uid}`];
  if (opts.interactive !== false) args.push('--allow-user-interaction');
  // polkitd takes details only from root or an action's owner ("Only trusted callers … can … pass details"): a
  // broker running as the person (the normal mode) asks without, and the person reads the statement where
  // Airlock asks them. pkcheck(1) spells it --detail KEY VALUE (its --help says --details: refused).
  if (process.getuid?.() === 0) args.push('--detail', 'statement', statement);
  const pkcheck = opts.pkcheck ?? 'pkcheck';
  const timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;

  return new Promise<PolkitAnswer>((resolve) => {
    let settled = false;
    const settle = (answer: PolkitAnswer) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(answer);
    };
    let child: ReturnType<typeof spawn>;
    try {
      child = spawn(pkcheck, args, { stdio: ['ignore', 'ignore', 'pipe'], shell: false });
    } catch (err) {
      settle(refused(`polkit is not available (${(err as Error).message})`));
      return;
    }
    let stderr = '';
    child.stderr?.setEncoding('utf8');
    child.stderr?.on('data', (d: string) => {
      if (stderr.length < MAX_OUTPUT) stderr += d.slice(0, MAX_OUTPUT - stderr.length);
    });
    const timer = setTimeout(() => {
      // polkitd cancels what a caller that left the bus was waiting for, so the agent's prompt goes away too
      child.kill('SIGTERM');
      settle(refused(`no answer within ${timeoutMs >= 1000 ? `${Math.round(timeoutMs / 1000)} s` : `${timeoutMs} ms`}`));
    }, timeoutMs);
    child.on('error', (err: NodeJS.ErrnoException) => {
      settle(refused(err.code === 'ENOENT' ? `polkit is not available (${pkcheck} not found)` : `pkcheck could not run (${err.message})`));
    });
    child.on('close', (status, signal) => settle(answerFor(status, signal, stderr)));
  });
}
