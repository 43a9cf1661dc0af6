/**
 * The team policy in force, kept up to date: read at start and again whenever its file changes (the folder is
 * watched, so a file that appears, or is replaced by a rename as editors and config managers do, is seen). A
 * file that is refused (load.ts: not root's, writable by others, bad JSON, a wrong value) leaves the policy that
 * was in force as it was, and says why with the line; a file that is removed ends the policy.
 *
 * Which file: the system's (location by platform) whenever it exists. `path` (the daemon's --managed-policy,
 * for tests and hardened set-ups) is read only while the system file does not exist, so it can never replace a
 * team policy the administrator installed, and it passes the same ownership check.
 */
import { existsSync, watch, type FSWatcher } from 'node:fs';
import { basename, dirname } from 'node:path';
import { type Loaded, loadManagedPolicy, systemPolicyPath } from './load.js';
import type { ManagedPolicy } from './schema.js';

export interface ManagedState {
  /** The file read last, and what became of it. */
  path: string | null;
  state: 'none' | 'ok' | 'refused';
  /** Why the last read was refused (the policy in force, if any, is the one before). */
  error?: string;
  line?: number;
  /** Whether a policy is in force (a refused file keeps the previous one). */
  inForce: boolean;
}

export interface WatcherOptions {
  /** The override path (see above). */
  path?: string;
  /** The system location (its default: by platform). */
  systemPath?: string;
  /** Accept a file not owned by root: in-process tests only; no flag or variable reaches it. */
  anyOwner?: boolean;
  /** The policy in force changed (loaded, replaced, ended). */
  changed(policy: ManagedPolicy | null, loadedAt: number): void;
  /** A read was refused. */
  refused(loaded: Extract<Loaded, { state: 'refused' }>): void;
  now(): number;
}

export class ManagedPolicyWatcher {
  policy: ManagedPolicy | null = null;
  loadedAt = 0;
  private last: ManagedState = { path: null, state: 'none', inForce: false };
  private readonly watchers: FSWatcher[] = [];
  private timer: NodeJS.Timeout | null = null;
  private readonly system: string;

  constructor(private readonly o: WatcherOptions) {
    this.system = o.systemPath ?? systemPolicyPath();
    this.reload();
    for (const file of new Set([this.system, ...(o.path ? [o.path] : [])])) this.watchFolder(file);
  }

  /** The file in force: the system's when it exists, else the override. */
  private file(): string | null {
    if (existsSync(this.system) || !this.o.path) return this.system;
    return this.o.path;
  }

  reload(): void {
    const path = this.file();
    const loaded: Loaded = path ? loadManagedPolicy(path, { anyOwner: this.o.anyOwner === true }) : { state: 'none' };
    if (loaded.state === 'refused') {
      this.last = { path: loaded.path, state: 'refused', error: loaded.error, ...(loaded.line !== null ? { line: loaded.line } : {}), inForce: this.policy !== null };
      this.o.refused(loaded);
      return;
    }
    const next = loaded.state === 'ok' ? loaded.policy : null;
    this.last = { path: loaded.state === 'ok' ? loaded.path : path, state: loaded.state, inForce: next !== null };
    if (JSON.stringify(next) === JSON.stringify(this.policy)) return;
    this.policy = next;
    this.loadedAt = this.o.now();
    this.o.changed(next, this.loadedAt);
  }

  status(): ManagedState {
    return { ...this.last };
  }

  stop(): void {
    for (const w of this.watchers.splice(0)) w.close();
    if (this.timer) clearTimeout(this.timer);
  }

  /** Watch the file's folder, when there is one (a folder that does not exist yet is not watched). */
  private watchFolder(file: string): void {
    const dir = dirname(file);
    if (!existsSync(dir)) return;
    try {
      const w = watch(dir, { persistent: false }, (_event, name) => {
        if (name !== null && name !== basename(file)) return;
        // an editor's save is several events: read once they settle
        if (this.timer) clearTimeout(this.timer);
        this.timer = setTimeout(() => {
          this.timer = null;
          this.reload();
        }, 50);
        this.timer.unref();
      });
      w.on('error', () => {});
      this.watchers.push(w);
    } catch {
      // a folder that cannot be watched: the policy read at start holds
    }
  }
}
