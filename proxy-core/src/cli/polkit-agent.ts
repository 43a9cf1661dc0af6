/**
 * polkit's text authentication agent beside a command run in a terminal: `pkttyagent --process <this pid>`, so
 * when the broker asks polkit about this process (checkPolkit, the peer being this CLI), polkit can ask the
 * person for their password right here. Only when stdin and stderr are terminals: a process without one (an
 * agent's shell) gets no agent, so polkit has nobody to ask and says no. --fallback leaves a desktop's own
 * agent in charge where there is one.
 */
import { spawn } from 'node:child_process';
import type { Readable } from 'node:stream';

export interface TextAgent {
  stop(): void;
}

export interface TextAgentOptions {
  /** The pkttyagent binary (found on PATH by default). */
  pkttyagent?: string;
  /** How long polkit may take to register the agent before this gives up on it. */
  registerTimeoutMs?: number;
}

/**
 * Start the text agent for this process and resolve once polkit has registered it; null when there is no
 * terminal, no pkttyagent, or polkit would not register it (then the check goes ahead without one).
 */
export function startTextAgent(opts: TextAgentOptions = {}): Promise<TextAgent | null> {
  if (process.platform !== 'linux' || !process.stdin.isTTY || !process.stderr.isTTY) return Promise.resolve(null);
  return new Promise((resolve) => {
    let settled = false;
    // fd 3 is pkttyagent's --notify-fd: it closes it once polkit has registered the agent
    const child = spawn(opts.pkttyagent ?? 'pkttyagent', ['--process', String(process.pid), '--fallback', '--notify-fd', '3'], {
      // it prompts on the controlling terminal (/dev/tty) itself; its errors go where ours do
      stdio: ['ignore', 'ignore', 'inherit', 'pipe'],
    });
    const kill = () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    };
    // an agent left behind would keep prompting for a process that is gone
    const onExit = () => kill();
    const stop = () => {
      process.off('exit', onExit);
      kill();
    };
    const settle = (agent: TextAgent | null) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (!agent) stop();
      resolve(agent);
    };
    process.on('exit', onExit);
    const timer = setTimeout(() => settle(null), opts.registerTimeoutMs ?? 10_000);
    child.on('error', () => settle(null));
    // it ended before it registered: polkit refused it, or there is no polkit
    child.on('exit', () => settle(null));
    const notify = child.stdio[3] as Readable | null;
    if (!notify) {
      settle(null);
      return;
    }
    notify.on('data', () => {});
    notify.on('error', () => {});
    // a pkttyagent that fails also closes the fd (by exiting); if its exit is seen after the close, this answers
    // an agent that is not there, and polkit, finding none, says no: the mistake can only refuse
    notify.on('close', () => {
      if (child.exitCode === null && child.signalCode === null) settle({ stop });
    });
  });
}
