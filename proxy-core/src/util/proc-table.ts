/**
 * The processes of this machine as /proc shows them (Linux): pid, parent, start time and state, and whether a
 * process's environment carries a given variable. What util/tree-watch.ts finds a server's descendants with.
 */
import { readdirSync, readFileSync } from 'node:fs';

export interface ProcEntry {
  pid: number;
  ppid: number;
  /** Field 22 of /proc/PID/stat (clock ticks since boot): with the pid, what tells a process from a later one. */
  startTime: string;
  /** Ended, not yet reaped: no longer running, and no longer signalable to any effect. */
  zombie: boolean;
}

/** One /proc/PID/stat line parsed, or undefined when it is not one (the process went meanwhile). */
export function parseStat(pid: number, stat: string): ProcEntry | undefined {
  // the command name (field 2) is in parentheses and may itself contain ") ": the fields follow the last one
  const close = stat.lastIndexOf(')');
  if (close === -1) return undefined;
  const fields = stat.slice(close + 2).split(' ');
  // fields[0] is field 3 (state), fields[1] field 4 (ppid), fields[19] field 22 (starttime)
  const ppid = Number(fields[1]);
  const startTime = fields[19];
  if (!fields[0] || !Number.isInteger(ppid) || startTime === undefined || !/^\d+$/.test(startTime)) return undefined;
  return { pid, ppid, startTime, zombie: fields[0] === 'Z' || fields[0] === 'X' };
}

/** One process now, or undefined when there is none by that pid. */
export function readProc(pid: number): ProcEntry | undefined {
  try {
    return parseStat(pid, readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return undefined;
  }
}

/** Every process now (those that end while being read are left out). */
export function readProcTable(): Map<number, ProcEntry> {
  const table = new Map<number, ProcEntry>();
  let names: string[];
  try {
    names = readdirSync('/proc');
  } catch {
    return table;
  }
  for (const name of names) {
    if (!/^\d+$/.test(name)) continue;
    const entry = readProc(Number(name));
    if (entry) table.set(entry.pid, entry);
  }
  return table;
}

/** The children of `pid` (of all its threads), from /proc/PID/task/TID/children; empty when it is gone. */
export function childrenOf(pid: number): number[] {
  const out: number[] = [];
  let tasks: string[];
  try {
    tasks = readdirSync(`/proc/${pid}/task`);
  } catch {
    return out;
  }
  for (const tid of tasks) {
    try {
      for (const child of readFileSync(`/proc/${pid}/task/${tid}/children`, 'utf8').split(' ')) if (child) out.push(Number(child));
    } catch {
      // the thread ended meanwhile
    }
  }
  return out;
}

/** Does the environment `pid` started with hold exactly `name=value`? False when it cannot be read. */
export function environHas(pid: number, name: string, value: string): boolean {
  let env: Buffer;
  try {
    env = readFileSync(`/proc/${pid}/environ`);
  } catch {
    return false;
  }
  const needle = Buffer.from(`${name}=${value}`);
  for (let at = env.indexOf(needle); at !== -1; at = env.indexOf(needle, at + 1)) {
    const end = at + needle.length;
    if ((at === 0 || env[at - 1] === 0) && (end === env.length || env[end] === 0)) return true;
  }
  return false;
}
