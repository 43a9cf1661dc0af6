/**
 * Pinned tool definitions (against rug pulls). The first definition the broker hears of a server's tool is
 * pinned (SQLite); a wrapper that later lists the tool with another definition (after `tools/list_changed`,
 * or a restart) holds it: the policy push carries each tool's pinned fingerprint, and the wrapper asks for
 * every call to a tool whose listed definition differs (policy/decide.ts), whatever a rule, a session approval
 * or trust would allow, until the user accepts the new definition here. Tools added after the server's first
 * listing, removed, and changed are journaled.
 *
 * The wrapper fingerprints definitions (classify/definition.ts) and sends them with its catalog; nothing here
 * trusts their shape: what does not read as a definition is not pinned, and texts are cut to their limits.
 */
import type { RowOrigin } from '../protocol/presence.js';
import type { RowSeals } from './db/sealed-tables.js';
import { BY_AIRLOCK } from './db/seals.js';
import type Database from 'better-sqlite3';
import { FILE_HEADERS_ONLY, formatPatch, structuredPatch } from 'diff';
import { changedParts, FIRST_DEFINITION_PARTS, type ToolDefinition } from '../classify/definition.js';
import { pinnedBeforeFullDefinitions, readDefinition, readParts, storedText, type Parts } from './pin-texts.js';
import { IpcError } from '../ipc/channel.js';
import { isObject } from '../jsonrpc/messages.js';
import type { PinChange, PinInfo } from '../protocol/api.js';
import type { EventDetails } from '../protocol/events.js';
import { LIMITS } from '../protocol/limits.js';
import type { Session } from './sessions.js';
import { bad } from './validate.js';

/** A server that invents tool names on every listing cannot grow the table past this (new names are not pinned). */
const MAX_PINS_PER_SERVER = 10_000;
/** Added, removed and changed tools journaled for one report at most (a server that swaps its whole catalog). */
const MAX_EVENTS_PER_REPORT = 200;
/** The diff a ticket or `pins list` shows, and the part of it an event keeps. */
const DIFF_LIMIT = 32 * 1024;
const EVENT_DIFF_LIMIT = 4 * 1024;
const DIFF_TIMEOUT_MS = 50;
const CHANGE_CACHE = 64;

type PinEvent = 'tool-added' | 'tool-removed' | 'tool-changed' | 'pin-accepted';

/** What the policy push carries for a pin without a good seal: a fingerprint no definition has. */
const UNSEALED_PIN = 'unsealed';

export interface PinsOptions {
  db: Database.Database;
  now(): number;
  /** Seals on the accepted part of a pin (db/seals.ts): a pin without a good one matches no definition. */
  seals?: RowSeals;
  record<K extends PinEvent>(type: K, server: string | null, tool: string | null, detail: EventDetails[K]): void;
}

interface Row {
  server: string;
  tool: string;
  fingerprint: string;
  definition: string;
  pinned_at: number;
  seen_fingerprint: string;
  seen_definition: string;
  seen_at: number;
  present: number;
}

/** A pin row without its texts. */
type PinState = Pick<Row, 'tool' | 'fingerprint' | 'seen_fingerprint' | 'present'>;


export class Pins {
  private readonly stmts;
  /** Pinned fingerprints per server, as the policy push carries them (rebuilt after a change). */
  private readonly byServer = new Map<string, Record<string, string>>();
  /**
   * What each connected wrapper listed last: a ticket shows the change its own wrapper saw, and two wrappers of
   * one server may run different releases of it (each is held to the pin on its own).
   */
  private readonly reported = new Map<Session, Map<string, ToolDefinition>>();
  /** Changes already worked out (a diff per held call would be wasted work), by pinned and current fingerprint. */
  private readonly changes = new Map<string, PinChange>();

  constructor(private readonly o: PinsOptions) {
    const db = o.db;
    this.stmts = {
      forServer: db.prepare('SELECT * FROM tool_pins WHERE server = ?'),
      // what a report and the policy push compare, without the definitions' texts (read only for a change)
      states: db.prepare('SELECT tool, fingerprint, seen_fingerprint, present FROM tool_pins WHERE server = ?'),
      // what a pin's seal covers, for the policy push (read once per server, then kept)
      sealedStates: db.prepare('SELECT server, tool, fingerprint, definition, pinned_at, via, seal FROM tool_pins WHERE server = ?'),
      all: db.prepare('SELECT * FROM tool_pins ORDER BY server, tool'),
      get: db.prepare('SELECT * FROM tool_pins WHERE server = ? AND tool = ?'),
      insert: db.prepare(`INSERT INTO tool_pins (server, tool, fingerprint, definition, pinned_at, seen_fingerprint, seen_definition, seen_at, present)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, 1)`),
      seen: db.prepare('UPDATE tool_pins SET seen_fingerprint = ?, seen_definition = ?, seen_at = ?, present = 1 WHERE server = ? AND tool = ?'),
      gone: db.prepare('UPDATE tool_pins SET present = 0 WHERE server = ? AND tool = ?'),
      accept: db.prepare('UPDATE tool_pins SET fingerprint = ?, definition = ?, pinned_at = ? WHERE server = ? AND tool = ?'),
    };
  }

  /** The pinned fingerprint of each tool of a server: what its wrappers' policy carries. */
  forServer(server: string): Record<string, string> {
    let pins = this.byServer.get(server);
    if (!pins) {
      // own properties only: a tool named "__proto__" is a pin like any other
      // a pin without a good seal (edited to the new definition's fingerprint, say) is no pin: every call of the
      // tool asks until the person accepts a definition, which seals it again
      const seals = this.o.seals;
      pins = seals
        ? Object.fromEntries((this.stmts.sealedStates.all(server) as Row[]).map((r) => [r.tool, seals.sealed('tool_pins', r as never) ? r.fingerprint : UNSEALED_PIN]))
        : Object.fromEntries((this.stmts.states.all(server) as PinState[]).map((r) => [r.tool, r.fingerprint]));
      this.byServer.set(server, pins);
    }
    return pins;
  }

  /**
   * A wrapper's catalog: pins tools seen for the first time, notes the definition each tool is listed with now,
   * and journals tools added (after the server's first listing), removed and changed. True when a pin was
   * added (the server's wrappers then get the new pins).
   */
  report(session: Session, verdicts: readonly unknown[], problems: readonly unknown[]): boolean {
    const definitions = new Map<string, ToolDefinition>();
    let named = 0;
    for (const v of verdicts) {
      if (!isObject(v) || typeof v.name !== 'string') continue;
      named++;
      // a name the journal and rules would cut is not pinned under a cut name: it could stand for another tool
      if (v.name.length === 0 || v.name.length > LIMITS.toolName) continue;
      const definition = readDefinition(v.definition);
      if (definition) definitions.set(v.name, definition);
    }
    this.reported.set(session, definitions);
    // a wrapper that sent no definitions (an older one), or whose listing failed (an empty catalog with a
    // problem), says nothing about which tools exist
    if (definitions.size === 0 && (named > 0 || problems.length > 0)) return false;
    const server = session.info.server;
    const client = session.info.client;
    let added = false;
    // journaled once the rows are written
    const events: (() => void)[] = [];
    const note = <K extends PinEvent>(type: K, tool: string, detail: EventDetails[K]): void => {
      if (events.length < MAX_EVENTS_PER_REPORT) events.push(() => this.o.record(type, server, tool, detail));
    };
    this.o.db.transaction(() => {
      const rows = new Map((this.stmts.states.all(server) as PinState[]).map((r) => [r.tool, r]));
      const first = rows.size === 0;
      let count = rows.size;
      const now = this.o.now();
      for (const [tool, d] of definitions) {
        const row = rows.get(tool);
        if (!row) {
          if (count >= MAX_PINS_PER_SERVER) continue;
          count++;
          const text = storedText(d.parts);
          this.stmts.insert.run(server, tool, d.fingerprint, text, now, d.fingerprint, text, now);
          this.o.seals?.reseal('tool_pins', [server, tool], BY_AIRLOCK);
          added = true;
          if (!first) note('tool-added', tool, { client, fingerprint: d.fingerprint });
          continue;
        }
        const returned = row.present !== 1;
        const newlySeen = row.seen_fingerprint !== d.fingerprint;
        if (!newlySeen && !returned) continue;
        const text = storedText(d.parts);
        const pinned = d.fingerprint !== row.fingerprint ? (this.stmts.get.get(server, tool) as Row) : undefined;
        const pinnedText = pinned?.definition ?? '';
        this.stmts.seen.run(d.fingerprint, text, now, server, tool);
        if (returned) note('tool-added', tool, { client, fingerprint: d.fingerprint, returned: true });
        if (d.fingerprint !== row.fingerprint && pinnedBeforeFullDefinitions(pinnedText) && changedParts(readParts(pinnedText), d.parts, FIRST_DEFINITION_PARTS).length === 0) {
          // Pinned by an Airlock that fingerprinted fewer parts, and the same in every part it did: the pin now
          // covers the whole definition as listed, with its first pinning time (the person accepted nothing new).
          this.stmts.accept.run(d.fingerprint, text, pinned!.pinned_at, server, tool);
          this.o.seals?.reseal('tool_pins', [server, tool], BY_AIRLOCK);
          added = true;
        } else if (d.fingerprint !== row.fingerprint) {
          const change = this.change(row.fingerprint, readParts(pinnedText), d.fingerprint, d.parts);
          note('tool-changed', tool, { client, fields: change.fields, pinned: change.pinned, current: change.current, diff: cut(change.diff, EVENT_DIFF_LIMIT) });
        }
      }
      if (!first) {
        for (const [tool, row] of rows) {
          if (row.present !== 1 || definitions.has(tool)) continue;
          this.stmts.gone.run(server, tool);
          note('tool-removed', tool, { client });
        }
      }
    })();
    for (const record of events) record();
    if (added) this.byServer.delete(server);
    return added;
  }

  /** A wrapper went away: what it listed no longer counts. */
  forget(session: Session): void {
    this.reported.delete(session);
  }

  /** For a ticket: how the definition the session's wrapper lists differs from the pin, and a reason saying so. */
  ticketChange(session: Session, tool: string): { change: PinChange; reason: string } | undefined {
    const listed = this.reported.get(session)?.get(tool);
    if (!listed) return undefined;
    const row = this.stmts.get.get(session.info.server, tool) as Row | undefined;
    if (!row || row.fingerprint === listed.fingerprint) return undefined;
    const change = this.change(row.fingerprint, readParts(row.definition), listed.fingerprint, listed.parts);
    const what = change.fields.length ? change.fields.join(', ') : 'its fingerprint';
    return { change, reason: `the definition changed since it was pinned: ${what}` };
  }

  /**
   * The tool's own description as its wrapper listed it last (what a card shows, escaped): from the listing's
   * text, or from the pin when the listing went by hash because it is the pinned definition.
   */
  description(session: Session, tool: string): string | undefined {
    const listed = this.reported.get(session)?.get(tool);
    if (!listed) return undefined;
    const text = listed.parts.description?.text;
    if (text) return text;
    const row = this.stmts.get.get(session.info.server, tool) as Row | undefined;
    if (!row || row.fingerprint !== listed.fingerprint) return undefined;
    return readParts(row.definition).description?.text || undefined;
  }

  /** Pins of one server (or all), changed ones first. */
  list(server?: string): PinInfo[] {
    const rows = (server === undefined ? this.stmts.all.all() : this.stmts.forServer.all(server)) as Row[];
    const rank = { changed: 0, pinned: 1, removed: 2 } as const;
    return rows
      .map((r) => this.info(r))
      .sort((a, b) => rank[a.status] - rank[b.status] || compare(a.server, b.server) || compare(a.tool, b.tool));
  }

  /** One tool's pin, for the catalog view. */
  get(server: string, tool: string): PinInfo | undefined {
    const row = this.stmts.get.get(server, tool) as Row | undefined;
    return row ? this.info(row) : undefined;
  }

  /** A tool's pinned input schema, for a call's argument summary; undefined without a pin or when cut (not JSON). */
  inputSchema(server: string, tool: string): unknown {
    const row = this.stmts.get.get(server, tool) as Row | undefined;
    const text = row ? readParts(row.definition).inputSchema?.text : undefined;
    if (text === undefined) return undefined;
    try {
      return JSON.parse(text) as unknown;
    } catch {
      return undefined;
    }
  }

  /**
   * The user accepts the definitions a server lists now: every changed tool, or one. With `fingerprint`, only
   * that definition (what the person looked at), which the last listing or a connected wrapper must list. A
   * tool listed now with two new definitions (two releases running) needs the fingerprint. Returns what was
   * accepted (nothing when nothing changed); the caller pushes the new pins.
   */
  /** `origin`: the decision's via, sealed with the accepted pin. */
  accept(server: string, tool?: string, fingerprint?: string, origin: RowOrigin = BY_AIRLOCK): PinInfo[] {
    if (fingerprint !== undefined && tool === undefined) throw bad("a fingerprint names one tool's definition: give the tool too");
    let rows: Row[];
    if (tool !== undefined) {
      const row = this.stmts.get.get(server, tool) as Row | undefined;
      if (!row) throw new IpcError('not-found', `no pinned tool "${tool}" of ${server} (see \`airlock pins list ${server}\`)`);
      rows = [row];
    } else {
      rows = this.stmts.forServer.all(server) as Row[];
      if (rows.length === 0) throw new IpcError('not-found', `no pinned tools for ${server} (see \`airlock pins list\`)`);
    }
    // decide every tool before changing any: a refusal leaves all pins as they were
    const chosen: { row: Row; next: { fingerprint: string; text: string } }[] = [];
    for (const row of rows) {
      const candidates = this.candidates(row);
      if (fingerprint !== undefined) {
        const next = candidates.find((c) => c.fingerprint === fingerprint);
        if (next) chosen.push({ row, next });
        else if (row.fingerprint !== fingerprint) {
          const now = candidates.map((c) => c.fingerprint.slice(0, 12)).join(', ') || 'the pinned one';
          throw new IpcError('conflict', `"${row.tool}" is not listed with definition ${fingerprint.slice(0, 12)} now (it is listed with ${now}): look at it again with \`airlock pins list ${server}\``);
        }
      } else if (candidates.length > 1) {
        throw new IpcError('conflict', `"${row.tool}" is listed with ${candidates.length} new definitions now (wrappers running different releases): accept one with \`airlock pins accept ${server} ${row.tool} --fingerprint SHA256\` (see \`airlock pins list ${server}\`)`);
      } else if (candidates.length === 1) chosen.push({ row, next: candidates[0]! });
    }
    const now = this.o.now();
    const accepted: PinInfo[] = [];
    for (const { row, next } of chosen) {
      const fields = changedParts(readParts(row.definition), readParts(next.text));
      this.stmts.accept.run(next.fingerprint, next.text, now, server, row.tool);
      this.o.seals?.reseal('tool_pins', [server, row.tool], origin);
      this.o.record('pin-accepted', server, row.tool, { fingerprint: next.fingerprint, previous: row.fingerprint, fields });
      accepted.push(this.info({ ...row, fingerprint: next.fingerprint, definition: next.text, pinned_at: now }));
    }
    if (accepted.length > 0) this.byServer.delete(server);
    return accepted;
  }

  /**
   * The definitions of a tool listed now that differ from its pin: those of the connected wrappers that list
   * it (what runs now), or, when none does, the last listing's.
   */
  private candidates(row: Row): { fingerprint: string; text: string }[] {
    const out: { fingerprint: string; text: string }[] = [];
    let live = false;
    for (const [session, listed] of this.reported) {
      if (session.info.server !== row.server) continue;
      const d = listed.get(row.tool);
      if (!d) continue;
      live = true;
      if (d.fingerprint !== row.fingerprint && !out.some((c) => c.fingerprint === d.fingerprint)) out.push({ fingerprint: d.fingerprint, text: storedText(d.parts) });
    }
    if (!live && row.present === 1 && row.seen_fingerprint !== row.fingerprint) out.push({ fingerprint: row.seen_fingerprint, text: row.seen_definition });
    return out;
  }

  private info(r: Row): PinInfo {
    const next = this.candidates(r)[0];
    const status = next ? 'changed' : r.present !== 1 ? 'removed' : 'pinned';
    const info: PinInfo = { server: r.server, tool: r.tool, status, fingerprint: r.fingerprint, pinnedAt: r.pinned_at, current: next?.fingerprint ?? r.seen_fingerprint, seenAt: r.seen_at };
    if (next) info.change = this.change(r.fingerprint, readParts(r.definition), next.fingerprint, readParts(next.text));
    return info;
  }

  /** What differs between a pinned definition and another: the parts, their texts, and a unified diff. */
  private change(pinned: string, before: Parts, current: string, after: Parts): PinChange {
    const key = `${pinned}>${current}`;
    const known = this.changes.get(key);
    if (known) return known;
    const fields = changedParts(before, after);
    const was: Record<string, string> = {};
    const now: Record<string, string> = {};
    const patches: string[] = [];
    for (const field of fields) {
      const a = shown(before[field]);
      const b = shown(after[field]);
      if (a !== undefined) was[field] = a;
      if (b !== undefined) now[field] = b;
      patches.push(unifiedDiff(field, a, b));
    }
    const change: PinChange = { fields, before: was, after: now, pinned, current, diff: cut(patches.join(''), DIFF_LIMIT) };
    if (this.changes.size >= CHANGE_CACHE) this.changes.delete(this.changes.keys().next().value!);
    this.changes.set(key, change);
    return change;
  }
}

/** A part's text as shown: marked when it was cut (the hash covers what is not shown). */
function shown(part: Parts[keyof Parts]): string | undefined {
  if (!part) return undefined;
  return part.cut ? `${part.text}\n[… cut here: the rest is not shown]` : part.text;
}

function unifiedDiff(field: string, before: string | undefined, after: string | undefined): string {
  const patch = structuredPatch(
    before === undefined ? `${field} (absent when pinned)` : `${field} (pinned)`,
    after === undefined ? `${field} (absent now)` : `${field} (now)`,
    before === undefined ? '' : `${before}\n`,
    after === undefined ? '' : `${after}\n`,
    undefined,
    undefined,
    { context: 3, timeout: DIFF_TIMEOUT_MS },
  );
  if (patch) return formatPatch(patch, FILE_HEADERS_ONLY);
  // too different to compare line by line in time: shown as what it is, one text replaced by another
  const lines = (text: string | undefined, sign: string) => (text === undefined ? [] : text.split('\n').map((l) => `${sign}${l}`));
  return [`--- ${field} (pinned)`, `+++ ${field} (now)`, ...lines(before, '-'), ...lines(after, '+'), ''].join('\n');
}

function cut(text: string, limit: number): string {
  if (text.length <= limit) return text;
  const end = text.lastIndexOf('\n', limit);
  return `${text.slice(0, end > 0 ? end : limit)}\n[… diff cut]\n`;
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
