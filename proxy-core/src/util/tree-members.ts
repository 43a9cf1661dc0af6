/**
 * Which processes belong to a server's tree, decided from a snapshot of the process table (pure, so it is
 * tested with made-up tables). A member is, with everything descended from it:
 *  - the server itself, and any process seen in its tree before (pid and start time both: a pid reused by a
 *    later process is not the one that was seen);
 *  - a process whose environment carries the tree's marker (setsid and double forks leave the process group and
 *    the parent chain, not an inherited environment);
 *  - where this process is a child subreaper, any of its own children it did not start (an orphan of the tree
 *    is reparented here, whatever it did to its session or environment).
 * Never this process or one of its ancestors, nor another tree's server.
 */
import type { ProcEntry } from './proc-table.js';

export interface TreeQuery {
  /** The server: its pid and start time. */
  leader: { pid: number; startTime: string };
  /** Processes seen in the tree before: pid -> start time. */
  known: ReadonlyMap<number, string>;
  /** Does this pid's environment carry the tree's marker? (Asked only of processes not already members.) */
  marked?(pid: number): boolean;
  /** This process's pid, when it is a child subreaper: its children it did not start are orphans of the tree. */
  adopter?: number;
  /** The children this process started itself (`pid:start time`): never taken for adopted orphans. */
  started?: ReadonlySet<string>;
  /** Pids that are never members, nor is anything below them reached through them (other trees' servers). */
  exclude: ReadonlySet<number>;
  /** This process. */
  self: number;
}

export function treeMembers(table: ReadonlyMap<number, ProcEntry>, q: TreeQuery): ProcEntry[] {
  const banned = new Set(q.exclude);
  // this process and its ancestors: whatever the environment or the table says
  for (let pid: number | undefined = q.self; pid !== undefined && pid > 0 && !banned.has(pid); pid = table.get(pid)?.ppid) banned.add(pid);

  const children = new Map<number, ProcEntry[]>();
  for (const e of table.values()) {
    const list = children.get(e.ppid);
    if (list) list.push(e);
    else children.set(e.ppid, [e]);
  }
  const members = new Map<number, ProcEntry>();
  const add = (e: ProcEntry) => {
    if (banned.has(e.pid) || members.has(e.pid)) return;
    members.set(e.pid, e);
    for (const child of children.get(e.pid) ?? []) add(child);
  };
  for (const e of table.values()) {
    if (banned.has(e.pid) || members.has(e.pid)) continue;
    const seen = e.pid === q.leader.pid ? q.leader.startTime : q.known.get(e.pid);
    const adopted = q.adopter !== undefined && e.ppid === q.adopter && !q.started?.has(`${e.pid}:${e.startTime}`);
    if (seen === e.startTime || adopted || (!e.zombie && q.marked?.(e.pid) === true)) add(e);
  }
  return [...members.values()];
}
