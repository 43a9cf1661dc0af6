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
import { setImmediate as nextTurn } from 'node:timers/promises';
import { changedParts, FIRST_DEFINITION_PARTS, type ToolDefinition } from '../classify/definition.js';
import { cut, EVENT_DIFF_LIMIT, PinChanges } from './pin-changes.js';
import { pinnedBeforeFullDefinitions, readDefinition, readParts, storedText } from './pin-texts.js';
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
/** Tools a report writes in one transaction (about 30 ms of the broker's time when they are all new pins). */
const REPORT_CHUNK = 500;

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
  /** Changes already worked out, by pinned and current fingerprint. */
  private readonly changes = new PinChanges();
  /** The report under way per server (each waits for the one before: see `report`). */
  private readonly reporting = new Map<string, Promise<void>>();
  /** Counts accepted pins: a report that saw one happen while it ran does not vouch for the whole cache. */
  private accepts = 0;

  constructor(private readonly o: PinsOptions) {
    const db = o.db;
    this.stmts = {
      forServer: db.prepare('SELECT * FROM tool_pins WHERE server = ?'),
      // what a report and the policy push compare, without the definitions' texts (read only for a change)
      states: db.prepare('SELECT tool, fingerprint, seen_fingerprint, present FROM tool_pins WHERE server = ?'),
      state: db.prepare('SELECT tool, fingerprint, seen_fingerprint, present FROM tool_pins WHERE server = ? AND tool = ?'),
      count: db.prepare('SELECT COUNT(*) AS n FROM tool_pins WHERE server = ?'),
      // what a pin's seal covers, for the policy push (read once per server, then kept)
      sealedStates: db.prepare('SELECT server, tool, fingerprint, definition, pinned_at, via, seal FROM tool_pins WHERE server = ?'),
      briefs: db.prepare('SELECT server, tool, fingerprint, pinned_at, seen_fingerprint, seen_at, present FROM tool_pins WHERE server = ?'),
      allBriefs: db.prepare('SELECT server, tool, fingerprint, pinned_at, seen_fingerprint, seen_at, present FROM tool_pins'),
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
   * added (the server's wrappers then get the new pins). What the wrapper lists counts for its tickets at once;
   * the rows are written REPORT_CHUNK tools to a transaction, with a turn of the event loop between two, so a
   * server listing 10,000 tools does not hold up every other wrapper's calls and heartbeats for a second. One
   * server's reports run one after the other: each reads the rows the one before wrote.
   */
  report(session: Session, verdicts: readonly unknown[], problems: readonly unknown[]): Promise<boolean> {
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
    if (definitions.size === 0 && (named > 0 || problems.length > 0)) return Promise.resolve(false);
    const server = session.info.server;
    const run = (this.reporting.get(server) ?? Promise.resolve()).then(() => this.write(server, session.info.client, definitions));
    const settled = run.then(
      () => undefined,
      () => undefined,
    );
    this.reporting.set(server, settled);
    void settled.then(() => {
      if (this.reporting.get(server) === settled) this.reporting.delete(server);
    });
    return run;
  }

  /** A report's rows, chunk by chunk (see `report`). */
  private async write(server: string, client: string, definitions: Map<string, ToolDefinition>): Promise<boolean> {
    const acceptsBefore = this.accepts;
    let count = (this.stmts.count.get(server) as { n: number }).n;
    const first = count === 0;
    let events = 0;
    /** Rows this report pinned, and sealed itself: what the push's cache learns without checking their seals again. */
    const pinned = new Map<string, string>();
    const tools = [...definitions];
    for (let i = 0; i < tools.length; i += REPORT_CHUNK) {
      // a turn before each chunk, the first too: reading the report's message was a long turn already
      await nextTurn();
      // journaled once the rows are written
      const notes: (() => void)[] = [];
      const note = <K extends PinEvent>(type: K, tool: string, detail: EventDetails[K]): void => {
        if (events++ < MAX_EVENTS_PER_REPORT) notes.push(() => this.o.record(type, server, tool, detail));
      };
      this.o.db.transaction(() => {
        const now = this.o.now();
        for (const [tool, d] of tools.slice(i, i + REPORT_CHUNK)) {
          // read in this chunk's transaction: a pin accepted since the report began counts
          const row = first ? undefined : (this.stmts.state.get(server, tool) as PinState | undefined);
          if (!row) {
            if (count >= MAX_PINS_PER_SERVER) continue;
            count++;
            const text = storedText(d.parts);
            this.stmts.insert.run(server, tool, d.fingerprint, text, now, d.fingerprint, text, now);
            this.o.seals?.reseal('tool_pins', [server, tool], BY_AIRLOCK);
            pinned.set(tool, d.fingerprint);
            if (!first) note('tool-added', tool, { client, fingerprint: d.fingerprint });
            continue;
          }
          const returned = row.present !== 1;
          const newlySeen = row.seen_fingerprint !== d.fingerprint;
          if (!newlySeen && !returned) continue;
          const text = storedText(d.parts);
          const pinnedRow = d.fingerprint !== row.fingerprint ? (this.stmts.get.get(server, tool) as Row) : undefined;
          const pinnedText = pinnedRow?.definition ?? '';
          this.stmts.seen.run(d.fingerprint, text, now, server, tool);
          if (returned) note('tool-added', tool, { client, fingerprint: d.fingerprint, returned: true });
          if (d.fingerprint !== row.fingerprint && pinnedBeforeFullDefinitions(pinnedText) && changedParts(readParts(pinnedText), d.parts, FIRST_DEFINITION_PARTS).length === 0) {
            // Pinned by an Airlock that fingerprinted fewer parts, and the same in every part it did: the pin now
            // covers the whole definition as listed, with its first pinning time (the person accepted nothing new).
            this.stmts.accept.run(d.fingerprint, text, pinnedRow!.pinned_at, server, tool);
            this.o.seals?.reseal('tool_pins', [server, tool], BY_AIRLOCK);
            pinned.set(tool, d.fingerprint);
          } else if (d.fingerprint !== row.fingerprint) {
            const change = this.changes.of(row.fingerprint, readParts(pinnedText), d.fingerprint, d.parts);
            note('tool-changed', tool, { client, fields: change.fields, pinned: change.pinned, current: change.current, diff: cut(change.diff, EVENT_DIFF_LIMIT) });
          }
        }
        if (!first && i + REPORT_CHUNK >= tools.length) {
          for (const row of this.stmts.states.all(server) as PinState[]) {
            if (row.present !== 1 || definitions.has(row.tool)) continue;
            this.stmts.gone.run(server, row.tool);
            note('tool-removed', row.tool, { client });
          }
        }
      })();
      for (const record of notes) record();
    }
    if (pinned.size > 0) this.learnPins(server, pinned, first && acceptsBefore === this.accepts);
    return pinned.size > 0;
  }

  /**
   * The push's cache learns the pins a report or an accept wrote (sealed by it, so not checked again: 10,000
   * seal checks held the broker for a fifth of a second). Without a cache, one starts from a report's pins when
   * they are all the server has (no pin accepted while it ran).
   */
  private learnPins(server: string, pinned: Map<string, string>, whole: boolean): void {
    const cached = this.byServer.get(server) ?? (whole ? {} : undefined);
    if (!cached) return;
    // defined, not assigned: a tool named "__proto__" is a pin like any other
    for (const [tool, fingerprint] of pinned) Object.defineProperty(cached, tool, { value: fingerprint, enumerable: true, writable: true, configurable: true });
    this.byServer.set(server, cached);
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
    const change = this.changes.of(row.fingerprint, readParts(row.definition), listed.fingerprint, listed.parts);
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
    // read without their texts, which only a changed pin shows (10,000 pins read whole held the broker for a
    // quarter of a second)
    const rows = (server === undefined ? this.stmts.allBriefs.all() : this.stmts.briefs.all(server)) as Row[];
    const rank = { changed: 0, pinned: 1, removed: 2 } as const;
    return rows
      .map((r) => this.info(this.mayHaveChanged(r) ? (this.stmts.get.get(r.server, r.tool) as Row) : r))
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
    const pinned = new Map<string, string>();
    for (const { row, next } of chosen) {
      pinned.set(row.tool, next.fingerprint);
      const fields = changedParts(readParts(row.definition), readParts(next.text));
      this.stmts.accept.run(next.fingerprint, next.text, now, server, row.tool);
      this.o.seals?.reseal('tool_pins', [server, row.tool], origin);
      this.o.record('pin-accepted', server, row.tool, { fingerprint: next.fingerprint, previous: row.fingerprint, fields });
      accepted.push(this.info({ ...row, fingerprint: next.fingerprint, definition: next.text, pinned_at: now }));
    }
    if (accepted.length > 0) {
      this.accepts++;
      this.learnPins(server, pinned, false);
    }
    return accepted;
  }

  /** Whether a row's tool is listed now (or was last) with a definition other than its pin: `candidates` reads its texts then. */
  private mayHaveChanged(row: Pick<Row, 'server' | 'tool' | 'fingerprint' | 'seen_fingerprint'>): boolean {
    if (row.seen_fingerprint !== row.fingerprint) return true;
    for (const [session, listed] of this.reported) {
      if (session.info.server !== row.server) continue;
      const d = listed.get(row.tool);
      if (d && d.fingerprint !== row.fingerprint) return true;
    }
    return false;
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
    if (next) info.change = this.changes.of(r.fingerprint, readParts(r.definition), next.fingerprint, readParts(next.text));
    return info;
  }
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
