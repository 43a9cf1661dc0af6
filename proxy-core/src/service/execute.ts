/**
 * Carry out a plan (plan.ts) step by step, stopping at the first that fails, with what was done so far said.
 * `root` stages every file under another folder (tests, packaging); the accounts are still the machine's, and the
 * service manager is then left alone.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { ServiceMarker } from '../ipc/system.js';
import { groupId, userId } from './accounts.js';
import { describeStep, type Step } from './plan.js';

export interface ExecuteOptions {
  root: string;
  platform: NodeJS.Platform;
  say: (line: string) => void;
}

export class StepFailed extends Error {
  constructor(step: Step, cause: string) {
    super(`could not ${describeStep(step).split('\n')[0]!.replace(/\s+/g, ' ')}: ${cause}`);
    this.name = 'StepFailed';
  }
}

/** Whether systemd (or launchd) is the running service manager: sd_booted()'s own test on Linux. */
export function serviceManagerRunning(platform: NodeJS.Platform): boolean {
  return platform === 'darwin' || existsSync('/run/systemd/system');
}

function uidOf(name: string): number {
  if (name === 'root') return 0;
  const id = userId(name);
  if (id === null) throw new Error(`there is no user ${name}`);
  return id;
}

function gidOf(name: string): number {
  if (name === 'root' || name === 'wheel') return 0;
  const id = groupId(name);
  if (id === null) throw new Error(`there is no group ${name}`);
  return id;
}

/** Written aside and renamed over, so a reader never sees half a file. */
function writeWhole(path: string, text: string, mode: number): void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o755 });
  const aside = `${path}.airlock-new`;
  writeFileSync(aside, text, { mode });
  chownSync(aside, 0, 0);
  chmodSync(aside, mode);
  renameSync(aside, path);
}

export function markerText(marker: ServiceMarker): string {
  return JSON.stringify(marker, null, 2) + '\n';
}

function runStep(step: Step, o: ExecuteOptions): string | null {
  const at = (p: string) => join(o.root, p);
  switch (step.do) {
    case 'note':
      return null;
    case 'run': {
      if (step.manager && (o.root !== '/' || !serviceManagerRunning(o.platform))) {
        return o.root !== '/' ? 'skipped: files are staged under --root' : 'skipped: systemd is not running on this machine';
      }
      try {
        execFileSync(step.argv[0]!, step.argv.slice(1), { stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8' });
      } catch (err) {
        const e = err as { stderr?: string; message: string };
        throw new StepFailed(step, (e.stderr || e.message).trim().split('\n').slice(-1)[0] ?? e.message);
      }
      return null;
    }
    case 'mkdir': {
      const p = at(step.path);
      mkdirSync(p, { recursive: true, mode: step.mode });
      chownSync(p, uidOf(step.owner), gidOf(step.group));
      chmodSync(p, step.mode);
      return null;
    }
    case 'write':
      writeWhole(at(step.path), step.text, step.mode);
      return null;
    case 'marker': {
      const l = step.layout;
      const marker: ServiceMarker = { version: 1, user: l.user, uid: uidOf(l.user), usersGroup: l.usersGroup, gid: gidOf(l.usersGroup), dataDir: l.dataDir, runDir: l.runDir };
      writeWhole(at(step.path), markerText(marker), 0o644);
      return null;
    }
    case 'remove':
      rmSync(at(step.path), { recursive: step.recursive ?? false, force: true });
      return null;
  }
}

export function execute(steps: Step[], o: ExecuteOptions): void {
  for (const step of steps) {
    let outcome: string | null;
    try {
      outcome = runStep(step, o);
    } catch (err) {
      if (err instanceof StepFailed) throw err;
      throw new StepFailed(step, (err as Error).message);
    }
    const line = describeStep(step).split('\n')[0]!;
    o.say(outcome ? `${line}  [${outcome}]` : line);
  }
}
