/**
 * Declared inverses: "TOOL of SERVER is undone by calling INVERSE". Two sources, one reading (policy/undo-spec.ts):
 * a person's stored declarations per server (SQLite, journaled, what the UI edits), and a running wrapper's
 * `--undo` flags, reported when its session opens. Only the stored ones are used to undo: a flag is what a config
 * entry says, which anything of the user's can edit, so it counts only as evidence (and is reported as ignored
 * where the person declared nothing the same). A declaration is refused when it names a tool the server does not list (checked against the
 * stored catalog when saved, and against the wrapper's own listing once it reports it), a tool names itself,
 * it cannot be parsed, the tool already has one, or a rule denies the inverse (an undo runs it as a call like any
 * other, so it would only be denied then; and a declaration must not become a way to run a tool a rule forbids).
 *
 * A declared inverse is also evidence: a tool that can be undone changes something, so its read-only claim is
 * not believed (the evidence goes into the policy's withdrawn claims, as observed contradictions do).
 */
import type { RowOrigin } from '../../protocol/presence.js';
import type { RowSeals } from '../db/sealed-tables.js';
import { BY_AIRLOCK } from '../db/seals.js';
import type Database from 'better-sqlite3';
import { IpcError } from '../../ipc/channel.js';
import type { EventDetails } from '../../protocol/events.js';
import type { DeclaredInverse } from '../../protocol/undo-api.js';
import { checkDecl, declarationProblems, formatUndoSpec, type InverseDecl, UndoSpecError } from '../../policy/undo-spec.js';
import { bad } from '../validate.js';

type InverseEvent = 'inverse-declared' | 'inverse-removed' | 'inverse-refused';

export interface InversesOptions {
  db: Database.Database;
  now(): number;
  /** The names a server listed last (its stored catalog), or empty when Airlock has not seen them. */
  listed(server: string): string[];
  /** Why a rule denies calls of `tool` of `server` (for `client`, or any client when undefined), or undefined. */
  denies(server: string, client: string | undefined, tool: string): string | undefined;
  record<K extends InverseEvent>(type: K, server: string | null, tool: string | null, detail: EventDetails[K]): void;
  /** Seals on declared inverses (db/seals.ts): a declaration without a good one is not used. */
  seals?: RowSeals;
}

interface SessionDecls {
  server: string;
  client: string;
  decls: Map<string, InverseDecl>;
  /** The wrapper has reported its listing, and the flags were checked against it. */
  checked: boolean;
}

/** Sessions whose flags are remembered after they close (a late journal entry may still need them). */
const CLOSED_KEPT = 200;

interface Row {
  server: string;
  tool: string;
  inverse: string;
  source: string;
  map: string | null;
}

export class Inverses {
  private readonly stmts;
  private readonly stored = new Map<string, Map<string, InverseDecl>>();
  private readonly sessions = new Map<string, SessionDecls>();
  private readonly closed: string[] = [];

  constructor(private readonly o: InversesOptions) {
    const db = o.db;
    this.stmts = {
      list: db.prepare('SELECT * FROM inverses ORDER BY server, tool'),
      insert: db.prepare('INSERT INTO inverses (server, tool, inverse, source, map, created_at) VALUES (?, ?, ?, ?, ?, ?)'),
      remove: db.prepare('DELETE FROM inverses WHERE server = ? AND tool = ?'),
    };
    for (const r of this.stmts.list.all() as Row[]) {
      if (o.seals && !o.seals.sealed('inverses', r as never)) continue;
      const decl = fromRow(r);
      if (decl) this.forServer(r.server).set(decl.tool, decl);
    }
  }

  private forServer(server: string): Map<string, InverseDecl> {
    let m = this.stored.get(server);
    if (!m) this.stored.set(server, (m = new Map()));
    return m;
  }

  /** Every declaration: stored ones, then those of connected wrappers. */
  list(): DeclaredInverse[] {
    const out: DeclaredInverse[] = [];
    for (const [server, decls] of this.stored) for (const d of decls.values()) out.push(shown(server, d, 'setting'));
    for (const [sessionId, s] of this.sessions) {
      if (this.closed.includes(sessionId)) continue;
      for (const d of s.decls.values()) out.push({ ...shown(s.server, d, 'wrapper'), sessionId });
    }
    return out.sort((a, b) => (a.server === b.server ? cmp(a.tool, b.tool) : cmp(a.server, b.server)));
  }

  /** Store a declaration for a server, checked against its catalog; throws bad-request with what is wrong. */
  /** `origin`: the decision's via, sealed with the declaration. */
  set(server: string, d: InverseDecl, origin: RowOrigin = BY_AIRLOCK): DeclaredInverse {
    const decl: InverseDecl = { tool: d.tool, inverse: d.inverse, from: d.from, ...(d.map ? { map: d.map } : {}) };
    try {
      checkDecl(decl);
    } catch (err) {
      throw bad((err as Error).message);
    }
    const existing = this.stored.get(server)?.get(decl.tool);
    if (existing) throw bad(`${decl.tool} of ${server} already has a declared inverse (${formatUndoSpec(existing)}); remove it first`);
    const listed = this.o.listed(server);
    if (listed.length === 0) throw bad(`Airlock has not seen the tools of ${server} yet: start it through airlock wrap once, then declare its inverses`);
    const problems = declarationProblems([decl], new Set(listed));
    if (problems.length) throw bad(problems.join('; '));
    const denied = this.o.denies(server, undefined, decl.inverse);
    if (denied) throw bad(deniedInverse(decl, denied));
    this.stmts.insert.run(server, decl.tool, decl.inverse, decl.from, decl.map ? JSON.stringify(decl.map) : null, this.o.now());
    this.o.seals?.reseal('inverses', [server, decl.tool], origin);
    this.forServer(server).set(decl.tool, decl);
    const out = shown(server, decl, 'setting');
    this.o.record('inverse-declared', server, decl.tool, { ...out, via: 'api' });
    return out;
  }

  remove(server: string, tool: string): { ok: true } {
    if (this.stmts.remove.run(server, tool).changes === 0) throw new IpcError('not-found', `no inverse declared for ${tool} of ${server} (see \`airlock inverses\`)`);
    this.stored.get(server)?.delete(tool);
    this.o.record('inverse-removed', server, tool, { server, tool });
    return { ok: true };
  }

  /** A wrapper's `--undo` flags, as its session opens: what cannot be meant is refused (journaled) and dropped. */
  sessionOpened(sessionId: string, server: string, client: string, raw: readonly InverseDecl[] | undefined): void {
    if (!raw?.length) return;
    const decls = new Map<string, InverseDecl>();
    for (const d of raw) {
      const spec = safeSpec(d);
      try {
        checkDecl(d);
        if (decls.has(d.tool)) throw new UndoSpecError(`${d.tool} is declared more than once`);
        const denied = this.o.denies(server, client, d.inverse);
        if (denied) throw new UndoSpecError(deniedInverse(d, denied));
      } catch (err) {
        this.o.record('inverse-refused', server, d.tool ?? null, { spec, problems: [(err as Error).message], client });
        continue;
      }
      decls.set(d.tool, { tool: d.tool, inverse: d.inverse, from: d.from, ...(d.map ? { map: d.map } : {}) });
    }
    this.sessions.set(sessionId, { server, client, decls, checked: false });
  }

  /**
   * A wrapper reported its server's tools: its flags that name a tool the server does not list are refused now.
   * True when something was dropped (the evidence in its policy changed).
   */
  catalogReported(sessionId: string, names: readonly string[]): boolean {
    const s = this.sessions.get(sessionId);
    if (!s || s.decls.size === 0) return false;
    const listed = new Set(names);
    // checked for the first time: its flags now count as a way to undo (see usable)
    let dropped = !s.checked;
    s.checked = true;
    for (const d of [...s.decls.values()]) {
      const problems = declarationProblems([d], listed);
      if (problems.length === 0) continue;
      s.decls.delete(d.tool);
      dropped = true;
      this.o.record('inverse-refused', s.server, d.tool, { spec: formatUndoSpec(d), problems, client: s.client });
    }
    return dropped;
  }

  /** A session ended: its flags are kept a while for journal entries still on their way. */
  sessionClosed(sessionId: string): void {
    if (!this.sessions.has(sessionId)) return;
    this.closed.push(sessionId);
    while (this.closed.length > CLOSED_KEPT) this.sessions.delete(this.closed.shift()!);
  }

  /**
   * The inverse that applies to a call of `tool` made in this session: the person's stored declaration. A
   * wrapper's `--undo` flag is what its config entry says, which anyone can edit: it never declares an inverse
   * by itself (undo would call what it names), only evidence against a read-only claim (see evidence).
   */
  forCall(server: string, _sessionId: string | null | undefined, tool: string): InverseDecl | undefined {
    return this.stored.get(server)?.get(tool);
  }

  /** A session's `--undo` flags that the person has not declared the same way (`airlock inverses`). */
  undeclaredFlags(sessionId: string): string[] {
    const s = this.sessions.get(sessionId);
    if (!s) return [];
    return [...s.decls.values()].filter((d) => {
      const stored = this.stored.get(s.server)?.get(d.tool);
      return !stored || formatUndoSpec(stored) !== formatUndoSpec(d);
    }).map((d) => `--undo ${safeSpec(d)}`);
  }

  /**
   * The declaration a call of this tool may count on before it runs (the ticket's `undoable`, a rule on
   * `undoable`): the person's stored one, only while the server's last listing has both the tool and its
   * inverse, and never one a deny rule covers now (a wrapper's flag alone is not the person's choice).
   */
  usable(server: string, sessionId: string, tool: string, listed: ReadonlySet<string> = new Set(this.o.listed(server))): InverseDecl | undefined {
    // the stored declaration only: a flag that differs from it is not the person's (see forCall)
    const s = this.sessions.get(sessionId);
    const decl = this.stored.get(server)?.get(tool);
    // an inverse a rule denies now would only be denied when the undo runs it: no way back to count on
    return decl && listed.has(decl.tool) && listed.has(decl.inverse) && !this.o.denies(server, s?.client, decl.inverse) ? decl : undefined;
  }

  /** Every tool of a session that `usable` finds a declaration for. */
  usableTools(server: string, sessionId: string): string[] {
    const tools = new Set(this.stored.get(server)?.keys() ?? []);
    if (tools.size === 0) return [];
    const listed = new Set(this.o.listed(server));
    return [...tools].filter((t) => this.usable(server, sessionId, t, listed) !== undefined);
  }

  /** Cheap: might a call of this tool of this server have an inverse (any session's flag, or a stored one)? */
  mayHave(server: string, tool: string): boolean {
    if (this.stored.get(server)?.has(tool)) return true;
    for (const s of this.sessions.values()) if (s.server === server && s.decls.has(tool)) return true;
    return false;
  }

  /** The read-only claims a session's policy must not believe: every tool with a declared inverse. */
  evidence(server: string, sessionId: string): Record<string, string> {
    const out: Record<string, string> = {};
    const add = (d: InverseDecl, where: string) => {
      out[d.tool] = `an inverse is declared for it (${formatUndoSpec(d)}, ${where}): a tool that can be undone changes something`;
    };
    for (const d of this.stored.get(server)?.values() ?? []) add(d, 'a stored declaration');
    const s = this.sessions.get(sessionId);
    if (s) for (const d of s.decls.values()) add(d, 'airlock wrap --undo');
    return out;
  }
}

function deniedInverse(d: InverseDecl, denied: string): string {
  return `${d.inverse} cannot be the inverse of ${d.tool}: ${denied}, and an undo runs its inverse as a call like any other (remove the rule, or declare another inverse)`;
}

function shown(server: string, d: InverseDecl, source: 'setting' | 'wrapper'): DeclaredInverse {
  return { server, tool: d.tool, inverse: d.inverse, from: d.from, ...(d.map ? { map: d.map } : {}), spec: formatUndoSpec(d), source };
}

function safeSpec(d: InverseDecl): string {
  try {
    return formatUndoSpec(d).slice(0, 2000);
  } catch {
    return '(unreadable)';
  }
}

function fromRow(r: Row): InverseDecl | null {
  let map: Record<string, string> | undefined;
  if (r.map !== null) {
    try {
      map = JSON.parse(r.map) as Record<string, string>;
    } catch {
      return null;
    }
  }
  const d: InverseDecl = { tool: r.tool, inverse: r.inverse, from: r.source === 'result' ? 'result' : 'args', ...(map ? { map } : {}) };
  try {
    checkDecl(d);
  } catch {
    return null;
  }
  return d;
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
