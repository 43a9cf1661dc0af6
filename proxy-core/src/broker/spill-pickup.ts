/**
 * Spill files left by wrappers that are gone (wrap/spill-file.ts): a wrapper that exits or dies while the
 * broker cannot take its journal leaves its entries on disk; the broker reads them at start and every few
 * seconds, and removes a file only once its entries are committed. A file whose wrapper (by the pid in its
 * name) still runs is left to that wrapper, which replays it itself when it reconnects.
 *
 * The spill folder is writable by anyone running as the user: every entry is checked as a wrapper's would be,
 * a file that is not a regular file (a link, a FIFO) or too large is set aside as `.unreadable` and reported,
 * and names no wrapper writes are left alone. Copies of entries the journal already holds merge forward
 * (store.ts), so a file replayed twice changes nothing.
 */
import { readdirSync, renameSync, unlinkSync } from 'node:fs';
import type { CallRecord } from '../protocol/api.js';
import { LIMITS } from '../protocol/limits.js';
import { parseSpillName, readSpillFile, SPILL_FOLDER, spillDir } from '../ipc/spill-file.js';
import { holdOwnFolderThere, type OwnFolder, whileHeld } from '../util/own-folder.js';
import { checkEntry } from './validate.js';

export interface SpillPickupOptions {
  dataDir: string;
  /** Commit these entries (throws when they cannot be: the file is kept and tried again later). */
  commit: (entries: CallRecord[]) => void;
  /** Entries in a file that could not be read or were refused: counted as lost. */
  lost: (count: number, why: string) => void;
  /** A file was taken in (or set aside): for the event stream. */
  taken: (file: string, entries: number, error?: string) => void;
  /** Is the process with this pid alive (a wrapper that will replay its own file)? */
  alive?: (pid: number) => boolean;
  /** True while nothing can be committed (a full disk): a scan then reads nothing. */
  paused?: () => boolean;
}

const SCAN_MS = 2000;

export function pidAlive(pid: number): boolean {
  // 0 and negative pids name process groups, not a process: never signalled, and no wrapper has one
  if (!Number.isSafeInteger(pid) || pid <= 0) return false;
  if (pid === process.pid) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

const str = (v: unknown, max: number, fallback: string): string => (typeof v === 'string' && v.length > 0 ? v.slice(0, max) : fallback);

export class SpillPickup {
  private timer: NodeJS.Timeout | null = null;
  /** Files that could not even be set aside: reported once, not at every scan. */
  private readonly reported = new Set<string>();

  constructor(private readonly o: SpillPickupOptions) {}

  start(intervalMs = SCAN_MS): void {
    this.scan();
    this.timer = setInterval(() => this.scan(), intervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** Take in every file of a wrapper that is gone; returns how many entries were committed. */
  scan(): number {
    if (this.o.paused?.()) return 0;
    const dir = spillDir(this.o.dataDir);
    // read and removed through the folder held: where a symlink stands instead, no wrapper writes (they refuse it
    // too, and say so), and nothing where it leads is read or removed
    let folder: OwnFolder | null;
    try {
      folder = holdOwnFolderThere(dir, SPILL_FOLDER);
    } catch {
      return 0;
    }
    if (folder === null) return 0; // no spill folder yet
    return whileHeld(folder, (held) => this.scanFolder(held));
  }

  private scanFolder(folder: OwnFolder): number {
    let names: string[];
    try {
      names = readdirSync(folder.self);
    } catch {
      return 0;
    }
    const alive = this.o.alive ?? pidAlive;
    let committed = 0;
    for (const name of names.sort()) {
      const parsed = parseSpillName(name);
      if (!parsed || this.reported.has(name) || alive(parsed.pid)) continue;
      const path = folder.at(name);
      let read: ReturnType<typeof readSpillFile>;
      try {
        read = readSpillFile(path);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') continue; // its wrapper removed it meanwhile
        // (said with the folder's own path, not the descriptor's it was reached through)
        this.setAside(path, name, folder.said((err as Error).message));
        continue;
      }
      const entries: CallRecord[] = [];
      let refused = read.unreadable;
      for (const e of read.entries) {
        // who and where: the entry's own (a spilled entry has no live session to take them from)
        const session = {
          info: { id: str(e.sessionId, 64, `spill-${parsed.pid}`), client: str(e.client, LIMITS.name, 'unknown'), server: str(e.server, LIMITS.name, 'unknown') },
        };
        try {
          entries.push(checkEntry(session, e));
        } catch {
          refused++;
        }
      }
      try {
        if (entries.length > 0) this.o.commit(entries);
      } catch {
        // not committed: the file stays, and is tried again at the next scan; the rest would fail the same way
        break;
      }
      committed += entries.length;
      if (refused > 0) this.o.lost(refused, `${refused} entries of the spill file ${name} could not be read`);
      this.o.taken(name, entries.length);
      this.remove(path);
    }
    return committed;
  }

  private setAside(path: string, name: string, error: string): void {
    try {
      renameSync(path, `${path}.unreadable`);
    } catch {
      // cannot even move it: reported once (the next scans pass it by), which is what a person can act on
      this.reported.add(name);
    }
    this.o.taken(name, 0, error);
  }

  private remove(path: string): void {
    try {
      // a crash before this replays the file at the next start: its entries merge into what is there
      unlinkSync(path);
    } catch {
      // already gone
    }
  }
}
