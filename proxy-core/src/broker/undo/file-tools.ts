/**
 * File tools: which tools of a server write files, and through which arguments (the file's path, and the whole
 * new content or a list of `{oldText,newText}` edits). A preview of a held call reads that file (broker/preview.ts).
 *
 * Two sources: a person's declarations (SQLite, journaled), and the reference filesystem server's own
 * `write_file` and `edit_file`, built in for every server Airlock has seen started with its command. A
 * declaration for the same server and tool wins over the built-in one.
 */
import type { RowOrigin } from '../../protocol/presence.js';
import type { RowSeals } from '../db/sealed-tables.js';
import { BY_AIRLOCK } from '../db/seals.js';
import type Database from 'better-sqlite3';
import { CONTROL_CHARACTERS } from '../../classify/classify.js';
import { IpcError } from '../../ipc/channel.js';
import type { FileTool } from '../../protocol/api.js';
import type { EventDetails } from '../../protocol/events.js';
import { bad } from '../validate.js';

export type FileToolDeclaration = Omit<FileTool, 'builtIn'>;

/** What `@modelcontextprotocol/server-filesystem` declares (its tools' input schemas). */
const FILESYSTEM_TOOLS: readonly Omit<FileToolDeclaration, 'server'>[] = [
  { tool: 'write_file', kind: 'write', pathArg: 'path', contentArg: 'content' },
  { tool: 'edit_file', kind: 'edit', pathArg: 'path', contentArg: 'edits' },
];

/**
 * Its tools that change files without new content: not previewed, but snapshotted for undo like the ones above
 * (`move`: both paths; `mkdir`: the folder and the missing ones above it).
 */
const FILESYSTEM_PATH_TOOLS: ReadonlyMap<string, SnapshotArgs> = new Map([
  ['move_file', { kind: 'move', args: ['source', 'destination'] }],
  ['create_directory', { kind: 'mkdir', args: ['path'] }],
]);

/** Which arguments of a tool name the paths it changes (what undo snapshots before the call), and how it changes them. */
export interface SnapshotArgs {
  kind: 'write' | 'edit' | 'move' | 'mkdir';
  args: string[];
  /**
   * The server writes a new file and renames it over the old one, never into it (the filesystem server's own
   * write_file and edit_file): the old bytes can be kept by holding on to the old file instead of copying it.
   */
  replaces?: boolean;
}

/** Does a session's command start the reference filesystem server (by package, bin or installed path)? */
export function startsFilesystemServer(command: readonly string[]): boolean {
  return command.some(
    (word) =>
      /(^|[\\/])@modelcontextprotocol[\\/]server-filesystem($|[@\\/])/.test(word) || /(^|[\\/])mcp-server-filesystem(\.cmd|\.exe|\.js)?$/i.test(word),
  );
}

export interface FileToolsOptions {
  db: Database.Database;
  now(): number;
  /** Seals on declared file tools (db/seals.ts): a declaration without a good one is not used. */
  seals?: RowSeals;
  record<K extends 'file-tool-set' | 'file-tool-removed'>(type: K, server: string | null, tool: string | null, detail: EventDetails[K]): void;
}

export class FileTools {
  private readonly stmts;
  /** Servers seen started with the filesystem server's command: they get its file tools built in. */
  private readonly filesystemServers = new Set<string>();

  constructor(private readonly o: FileToolsOptions) {
    const db = o.db;
    this.stmts = {
      list: db.prepare('SELECT * FROM file_tools ORDER BY server, tool'),
      get: db.prepare('SELECT * FROM file_tools WHERE server = ? AND tool = ?'),
      upsert: db.prepare(`INSERT INTO file_tools (server, tool, kind, path_arg, content_arg, created_at) VALUES (?, ?, ?, ?, ?, ?)
        ON CONFLICT(server, tool) DO UPDATE SET kind = excluded.kind, path_arg = excluded.path_arg, content_arg = excluded.content_arg, created_at = excluded.created_at`),
      remove: db.prepare('DELETE FROM file_tools WHERE server = ? AND tool = ?'),
      // sessions of earlier runs count: a server is known by what it was started with, not only by who is connected
      seen: db.prepare("SELECT DISTINCT server, command FROM sessions WHERE command LIKE '%server-filesystem%'"),
    };
    for (const row of this.stmts.seen.all() as { server: string; command: string }[]) {
      let command: unknown;
      try {
        command = JSON.parse(row.command);
      } catch {
        continue;
      }
      if (Array.isArray(command) && startsFilesystemServer(command.filter((w): w is string => typeof w === 'string'))) this.filesystemServers.add(row.server);
    }
  }

  /** A stored declaration is used only with a good seal (when the broker keeps seals). */
  private believed(row: Row): boolean {
    return !this.o.seals || this.o.seals.sealed('file_tools', row as never);
  }

  /** A wrapper session opened: its server may be the filesystem server. */
  noteSession(server: string, command: readonly string[]): void {
    if (startsFilesystemServer(command)) this.filesystemServers.add(server);
  }

  /** Every file tool Airlock knows, declared and built in, by server then tool. */
  list(): FileTool[] {
    const declared = (this.stmts.list.all() as Row[]).filter((r) => this.believed(r)).map(fromRow);
    const taken = new Set(declared.map((d) => `${d.server}\0${d.tool}`));
    const builtIn = [...this.filesystemServers].flatMap((server) =>
      FILESYSTEM_TOOLS.filter((t) => !taken.has(`${server}\0${t.tool}`)).map((t): FileTool => ({ server, ...t, builtIn: true })),
    );
    return [...declared, ...builtIn].sort((a, b) => (a.server === b.server ? cmp(a.tool, b.tool) : cmp(a.server, b.server)));
  }

  /** How this tool of this server writes files, when Airlock knows. */
  get(server: string, tool: string): FileTool | undefined {
    const row = this.stmts.get.get(server, tool) as Row | undefined;
    if (row && this.believed(row)) return fromRow(row);
    if (!this.filesystemServers.has(server)) return undefined;
    const t = FILESYSTEM_TOOLS.find((x) => x.tool === tool);
    return t ? { server, ...t, builtIn: true } : undefined;
  }

  /** The path arguments undo snapshots for a call of this tool, when Airlock knows them (declared or built in). */
  snapshotArgs(server: string, tool: string): SnapshotArgs | undefined {
    const t = this.get(server, tool);
    if (t) return { kind: t.kind, args: [t.pathArg], ...(t.builtIn ? { replaces: true } : {}) };
    const builtIn = this.filesystemServers.has(server) ? FILESYSTEM_PATH_TOOLS.get(tool) : undefined;
    return builtIn ? { kind: builtIn.kind, args: [...builtIn.args] } : undefined;
  }

  /** Every tool of a server whose files are snapshotted, with its path arguments: what a wrapper waits for. */
  snapshotTools(server: string): Record<string, string[]> {
    // no prototype: a tool may be called "__proto__"
    const out = Object.create(null) as Record<string, string[]>;
    for (const t of this.list()) if (t.server === server) out[t.tool] = [t.pathArg];
    if (this.filesystemServers.has(server)) {
      for (const [tool, spec] of FILESYSTEM_PATH_TOOLS) if (!Object.hasOwn(out, tool) && !this.stmts.get.get(server, tool)) out[tool] = [...spec.args];
    }
    return out;
  }

  /** Declare (or re-declare) a file tool; throws bad-request for names a person could not have meant. */
  /** `origin`: the decision's via, sealed with the declaration. */
  set(p: FileToolDeclaration, origin: RowOrigin = BY_AIRLOCK): FileTool {
    if (CONTROL_CHARACTERS.test(p.server) || CONTROL_CHARACTERS.test(p.tool)) throw bad('a server or tool name with control characters cannot be a file tool');
    for (const [what, name] of [['pathArg', p.pathArg], ['contentArg', p.contentArg]] as const) {
      if (name.trim() === '' || CONTROL_CHARACTERS.test(name)) throw bad(`${what} must name an argument`);
    }
    if (p.pathArg === p.contentArg) throw bad('pathArg and contentArg must be two different arguments');
    const tool: FileTool = { server: p.server, tool: p.tool, kind: p.kind, pathArg: p.pathArg, contentArg: p.contentArg };
    this.stmts.upsert.run(tool.server, tool.tool, tool.kind, tool.pathArg, tool.contentArg, this.o.now());
    this.o.seals?.reseal('file_tools', [tool.server, tool.tool], origin);
    this.o.record('file-tool-set', tool.server, tool.tool, tool);
    return tool;
  }

  remove(server: string, tool: string): { ok: true } {
    if (this.stmts.remove.run(server, tool).changes === 0) {
      if (this.get(server, tool)?.builtIn) throw bad(`${tool} of ${server} is built in (the filesystem server's); declare it otherwise with file-tools.set`);
      throw new IpcError('not-found', `no file tool ${tool} declared for ${server}`);
    }
    this.o.record('file-tool-removed', server, tool, { server, tool });
    return { ok: true };
  }
}

interface Row {
  server: string;
  tool: string;
  kind: string;
  path_arg: string;
  content_arg: string;
}

function fromRow(r: Row): FileTool {
  return { server: r.server, tool: r.tool, kind: r.kind === 'edit' ? 'edit' : 'write', pathArg: r.path_arg, contentArg: r.content_arg };
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
