/**
 * A server's process tree on Linux, beyond its process group: what a worker that called setsid (or was spawned
 * detached, or double-forked) still belongs to. The tree is sampled while the server runs (so a process whose
 * parent later exits stays known), found again at stop time through /proc (util/tree-members.ts), and killed
 * there: frozen with SIGSTOP until a scan finds nothing new (a stopped process forks no more), then SIGKILL. Each
 * signal goes only to a pid whose start time is still the one found, so a pid reused by an unrelated process is
 * left alone. Orphans reparented to this process (a child subreaper, util/reaper.ts) are reaped once killed.
 */
import { closeSync, openSync, readSync } from 'node:fs';
import { childrenOf, type ProcEntry, environHas, readProc, readProcTable } from './proc-table.js';
import { isSubreaper, reapOrphan } from './reaper.js';
import { treeMembers } from './tree-members.js';

/** The variable every process of a tree inherits, valued with the tree's own marker. */
export const TREE_MARKER_VAR = 'AIRLOCK_PROCESS_TREE';
const SAMPLE_MS = 1000;
const MAX_FREEZE_ROUNDS = 50;

/**
 * A tree's marker: 16 bytes from the kernel's random source, as hex. Read from /dev/urandom (this is Linux) rather
 * than through node:crypto, because a wrapper makes it just before it spawns its server, and loading node:crypto
 * (OpenSSL's set-up) would delay that spawn by milliseconds; the relay loads it after the spawn.
 */
function newMarker(): string {
  const bytes = Buffer.alloc(16);
  const fd = openSync('/dev/urandom', 'r');
  try {
    if (readSync(fd, bytes, 0, bytes.length, null) !== bytes.length) throw new Error('a short read from /dev/urandom');
  } finally {
    closeSync(fd);
  }
  return bytes.toString('hex');
}

/** The servers this process started and watches: never members of one another's trees. */
const leaders = new Set<number>();
/** Every server this process ever started (pid:start time): children of Node's, never reaped here. */
const spawnedByNode = new Set<string>();

export class TreeWatch {
  readonly marker = newMarker();
  private leader: { pid: number; startTime: string } | undefined;
  private readonly known = new Map<number, string>();
  private timer: NodeJS.Timeout | undefined;

  /** The server's environment: `base` with the tree's marker. */
  env(base: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
    return { ...base, [TREE_MARKER_VAR]: this.marker };
  }

  /** The server is running as `pid`: watch its tree until close(). */
  start(pid: number): void {
    const entry = readProc(pid);
    if (!entry) return;
    this.leader = { pid, startTime: entry.startTime };
    leaders.add(pid);
    spawnedByNode.add(`${pid}:${entry.startTime}`);
    this.timer = setInterval(() => this.sample(), SAMPLE_MS);
    this.timer.unref();
  }

  /** The living members now (the server included while it runs). `marked`: also look for the marker (slower). */
  members(marked = true): ProcEntry[] {
    if (!this.leader) return [];
    const table = readProcTable();
    const exclude = new Set([...leaders].filter((pid) => pid !== this.leader?.pid));
    const found = treeMembers(table, {
      leader: this.leader,
      known: this.known,
      exclude,
      self: process.pid,
      // an orphan reparented here cannot say which tree it came from: adopted ones count only while this tree is
      // the wrapper's one server tree (a server restarted on release while the old tree is still being swept has
      // its own orphans, and they are found by its own marker and samples instead)
      ...(isSubreaper() && exclude.size === 0 ? { adopter: process.pid, started: spawnedByNode } : {}),
      ...(marked ? { marked: (pid: number) => environHas(pid, TREE_MARKER_VAR, this.marker) } : {}),
    });
    for (const e of found) {
      if (e.zombie) this.reap(e);
      else this.known.set(e.pid, e.startTime);
    }
    return found.filter((e) => !e.zombie);
  }

  /** Send `signal` to every living member. */
  signal(signal: NodeJS.Signals): void {
    for (const e of this.members()) send(e, signal);
  }

  /** Kill every member, the ones it starts meanwhile included: freeze them all, then SIGKILL. */
  kill(): void {
    const frozen = new Map<number, ProcEntry>();
    for (let round = 0; round < MAX_FREEZE_ROUNDS; round++) {
      const fresh = this.members().filter((e) => frozen.get(e.pid)?.startTime !== e.startTime);
      if (fresh.length === 0) break;
      for (const e of fresh) if (send(e, 'SIGSTOP')) frozen.set(e.pid, e);
    }
    for (const e of frozen.values()) send(e, 'SIGKILL');
    // what is still found (forked in the last instant) goes the same way; the dead are reaped where they are ours
    for (let round = 0; round < MAX_FREEZE_ROUNDS; round++) {
      const left = this.members();
      if (left.length === 0) break;
      for (const e of left) send(e, 'SIGKILL');
    }
  }

  /** Stop watching (the tree is gone). */
  close(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    if (this.leader) leaders.delete(this.leader.pid);
  }

  /**
   * Walk down from the server and what was seen before, through each process's list of children: reads the
   * tree's own /proc entries, not the whole table. What a double fork's middle process takes along when it
   * exits is known from then on. As a subreaper, orphans that ended by themselves are reaped here.
   */
  private sample(): void {
    if (!this.leader) return;
    const seen = new Map<number, string>();
    const queue: ProcEntry[] = [];
    const visit = (pid: number, startTime?: string) => {
      if (seen.has(pid) || pid === process.pid) return;
      const e = readProc(pid);
      if (!e || (startTime !== undefined && e.startTime !== startTime)) return;
      if (e.zombie) return this.reap(e);
      seen.set(pid, e.startTime);
      queue.push(e);
    };
    visit(this.leader.pid, this.leader.startTime);
    for (const [pid, startTime] of this.known) visit(pid, startTime);
    for (let e = queue.shift(); e; e = queue.shift()) for (const child of childrenOf(e.pid)) visit(child);
    this.known.clear();
    for (const [pid, startTime] of seen) this.known.set(pid, startTime);
    if (isSubreaper()) for (const child of childrenOf(process.pid)) if (!leaders.has(child)) visit(child);
  }

  private reap(e: ProcEntry): void {
    // only an orphan reparented to this subreaper: never a child Node started (the server), whose end Node's
    // own child handling must see, and nothing in a process that is no subreaper (its children are all Node's)
    const orphan = isSubreaper() && e.ppid === process.pid && !leaders.has(e.pid) && !spawnedByNode.has(`${e.pid}:${e.startTime}`);
    if (orphan) reapOrphan(e.pid);
    this.known.delete(e.pid);
  }
}

/** Signal a process found earlier if it is still that process (same start time). */
function send(e: ProcEntry, signal: NodeJS.Signals): boolean {
  if (readProc(e.pid)?.startTime !== e.startTime) return false;
  try {
    process.kill(e.pid, signal);
    return true;
  } catch {
    return false;
  }
}
