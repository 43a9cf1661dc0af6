/**
 * Everything the broker must not forget, in SQLite (WAL): one database, one class per table (or pair of
 * tables kept together) holding that table's statements. Journal writes are batched into one transaction
 * per tick by the caller; every other write is small and immediate. Times the Store stamps come from `now`
 * (the broker's clock; Date.now unless told otherwise).
 *
 * The Store's own methods hand on to the tables, for callers written before them.
 */
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import type { Integrity } from '../../protocol/api.js';
import { isSettingKey } from '../../protocol/settings.js';
import type { RowOrigin } from '../../protocol/presence.js';
import { checkIntegrity } from './integrity.js';
import { initialMarks, LogMarks } from './log-marks.js';
import type { Row } from './queries.js';
import { rowSealed, sealEveryRow, SEALED_TABLES, type SealedTableName, signRow } from './sealed-tables.js';
import { BEFORE_PROOFS, loadOrCreateSealKey, Sealer } from './seals.js';
import { TIGHTENING_KEY, TighteningRecord } from './tightening.js';
import type { Verdict } from '../../classify/classify.js';
import type { BrokerEvent, CallRecord, HistoryItem, HistoryQuery, Remember, SessionInfo, Ticket } from '../../protocol/api.js';
import type { Rule } from '../../policy/rules.js';
import type { CallEvent } from '../../protocol/events.js';
import { isDiskError } from './files.js';
import { CatalogTable } from './catalog-table.js';
import { EventsTable, type EventsQuery } from './events-table.js';
import { chmodDatabaseFiles, databaseError, openPrivateDatabase } from './files.js';
import { IntakeLog } from './intake-log.js';
import { JournalTable } from './journal-table.js';
import { MIGRATIONS } from './migrations.js';
import { Names } from './names.js';
import type { PruneOptions, PruneResult } from './retention.js';
import { RulesTable } from './rules-table.js';
import { SessionsTable } from './sessions-table.js';
import type { Brief } from './journal-table.js';
import { SettingsTable } from './settings-table.js';
import { StatementCache } from './statement-cache.js';
import { TicketsTable } from './tickets-table.js';

export type { EventsQuery } from './events-table.js';

/** Records of one intake batch, checked, with when the broker received them (their events' time). */
export interface IntakeGroup {
  records: readonly CallRecord[];
  at: number;
}

export interface StoreOptions {
  /** The clock for times the Store stamps itself (events, ends of sessions and tickets, the catalog). */
  now?: () => number;
  /** The seal key (seals.ts); by default `presence.key` beside the database, made at first start. */
  sealKey?: Buffer;
}

/** The migration (1-based number) that brings seals in: the rows already there are sealed as it runs. */
const SEALS_MIGRATION = 12;

export class Store {
  readonly db: Database.Database;
  readonly settings: SettingsTable;
  readonly sessions: SessionsTable;
  readonly catalogs: CatalogTable;
  readonly tickets: TicketsTable;
  readonly ruleSet: RulesTable;
  readonly eventLog: EventsTable;
  readonly journal: JournalTable;
  /** Batches received and not yet in the journal (intake-log.ts; opened by the broker). */
  readonly intake: IntakeLog;
  /**
   * Moves what the intake holds into the journal (set by the broker: journal-writer.ts). Run before the journal
   * or the events are read, so a reader sees every batch the broker acknowledged.
   */
  fileIntake: () => void = () => {};
  /**
   * What else is written in the transaction that files calls into the journal (set by the broker: undo's record of
   * a call with a declared inverse, broker/undo/finish.ts `filing`), so that a broker killed right after the commit
   * has it too. A disk error it throws fails the whole filing; any other undoes only what it wrote.
   */
  filing: (events: readonly CallEvent[]) => void = () => {};
  readonly sealer: Sealer;
  readonly tightening: TighteningRecord;
  readonly marks: LogMarks;
  /** Statements prepared once (reseal runs once per row a big catalog pins: preparing each time cost more than the row). */
  private readonly statements: StatementCache;
  private readonly names: Names;
  private readonly moveTx: (groups: readonly IntakeGroup[], upTo: number) => CallEvent[];
  private readonly writeTx: (records: readonly CallRecord[], at: number | undefined) => CallEvent[];
  /** `filing` in a savepoint of the filing's transaction: what it wrote goes whole or not at all. */
  private readonly filingTx: (events: readonly CallEvent[]) => void;
  /** What the start-up check found (checkIntegrity; null until it ran). */
  integrity: Integrity | null = null;

  /** Opens (creating when absent) the database at `path`; its files are 0600 and any failure names the file. */
  constructor(path: string, options: StoreOptions = {}) {
    this.db = openPrivateDatabase(path);
    let sealsNew = false;
    try {
      this.sealer = new Sealer(options.sealKey ?? loadOrCreateSealKey(dirname(path)));
      this.db.pragma('journal_mode = WAL');
      // NORMAL in WAL mode survives a process crash; only an OS crash can lose the last commits.
      this.db.pragma('synchronous = NORMAL');
      this.db.pragma('busy_timeout = 5000');
      sealsNew = this.migrate();
      // SQLite quietly falls back to read-only when it cannot open the file for writing: a real write (the
      // schema version, unchanged) finds out now, not at the first E-Stop that could not be saved
      try {
        this.db.pragma(`user_version = ${this.db.pragma('user_version', { simple: true }) as number}`);
      } catch (err) {
        // a full disk is not a read-only file: the broker starts, and says the disk is full (disk-guard.ts)
        if (!isDiskError(err)) throw err;
      }
      // SQLite gives the -wal and -shm files the database's own 0600 mode; older ones are tightened here
      chmodDatabaseFiles(path);
    } catch (err) {
      this.db.close();
      throw databaseError(path, err);
    }
    const now = options.now ?? Date.now;
    try {
      const cache = new StatementCache(this.db);
      this.statements = cache;
      const names = new Names(this.db);
      this.names = names;
      this.settings = new SettingsTable(this.db, this.sealer);
      this.sessions = new SessionsTable(this.db, now);
      this.catalogs = new CatalogTable(this.db, now);
      this.tickets = new TicketsTable(this.db, now);
      this.ruleSet = new RulesTable(this.db, this.sealer);
      this.eventLog = new EventsTable(this.db, now, cache, names);
      this.journal = new JournalTable(this.db, this.eventLog, cache, names);
      const mark = { get: this.db.prepare('SELECT seq FROM intake_mark WHERE id = 1').pluck(), set: this.db.prepare('UPDATE intake_mark SET seq = ? WHERE id = 1') };
      this.intake = new IntakeLog(dirname(path), () => Number(mark.get.get() ?? 0));
      this.moveTx = this.db.transaction((groups: readonly IntakeGroup[], upTo: number) => {
        const events: CallEvent[] = [];
        for (const g of groups) for (const e of this.journal.insertRows(g.records, g.at)) events.push(e);
        this.fileWithin(events);
        mark.set.run(upTo);
        return events;
      });
      this.filingTx = this.db.transaction((events: readonly CallEvent[]) => this.filing(events));
      this.writeTx = this.db.transaction((records: readonly CallRecord[], at: number | undefined) => {
        const events = this.journal.insertRows(records, at ?? now());
        this.fileWithin(events);
        return events;
      });
      this.tightening = new TighteningRecord(this.db, this.ruleSet, this.settings);
      this.marks = new LogMarks(this.db, this.settings);
      // the record of tightening rows follows every change of a rule or a setting it could hold
      this.ruleSet.changed = () => this.tightening.write();
      this.settings.changed = (key) => {
        if (key !== TIGHTENING_KEY && (key === 'estop' || isSettingKey(key))) this.tightening.write();
      };
      this.journal.pruned = (log, seq) => this.marks.pruned(log, seq);
      if (sealsNew) this.tightening.write();
    } catch (err) {
      // a schema version that claims tables the file does not have: close, and name the file
      this.db.close();
      throw databaseError(path, err);
    }
  }

  /** Applies the migrations this file lacks; true when the one that brings seals in ran now. */
  private migrate(): boolean {
    const version = this.db.pragma('user_version', { simple: true }) as number;
    if (version > MIGRATIONS.length) {
      throw new Error(`the database was written by a newer Airlock (schema ${version}, this one knows ${MIGRATIONS.length}); refusing to touch it`);
    }
    for (let i = version; i < MIGRATIONS.length; i++) {
      const sql = MIGRATIONS[i]!;
      this.db.transaction(() => {
        this.db.exec(sql);
        if (i + 1 === SEALS_MIGRATION) {
          sealEveryRow(this.db, this.sealer, BEFORE_PROOFS);
          initialMarks(this.db, this.sealer);
        }
        this.db.pragma(`user_version = ${i + 1}`);
      })();
    }
    return version < SEALS_MIGRATION && MIGRATIONS.length >= SEALS_MIGRATION;
  }

  /**
   * The start-up check (integrity.ts): tightening rows put back, rows without a good seal found, gaps in the
   * logs counted. Run once, before the broker reads its rules; its result is kept for `status`.
   */
  checkIntegrity(): Integrity {
    return (this.integrity = checkIntegrity(this));
  }

  /** Seal the row of `table` named by `key` (its key columns' values) as it is now, as made by `origin`. */
  reseal(table: SealedTableName, key: readonly unknown[], origin: RowOrigin): void {
    const where = SEALED_TABLES[table].key.map((c) => `${c} = ?`).join(' AND ');
    const row = this.statements.get(`SELECT * FROM ${table} WHERE ${where}`).get(...key) as Row | undefined;
    if (!row) return;
    const { via, seal } = signRow(this.sealer, table, row, origin);
    this.statements.get(`UPDATE ${table} SET via = ?, seal = ? WHERE ${where}`).run(via, seal, ...key);
    if (table === 'settings') this.settings.forget(String(key[0]));
  }

  /** Whether a row read with its via and seal columns carries a good seal. */
  sealed(table: SealedTableName, row: Row): boolean {
    return rowSealed(this.sealer, table, row);
  }

  close(): void {
    this.intake.close();
    this.db.close();
  }

  // ---- the tables' methods under their earlier names ------------------------------------------------

  getSetting(key: string): string | undefined {
    return this.settings.get(key);
  }

  setSetting(key: string, value: string, origin?: RowOrigin): void {
    this.settings.set(key, value, origin);
  }

  /** Calls written into the journal outside the intake (a spill file, an undo's own entry), in one transaction. */
  writeJournal(records: readonly CallRecord[], at?: number): CallEvent[] {
    if (records.length === 0) return [];
    return this.names.within(() => this.writeTx(records, at));
  }

  /**
   * `filing`, inside a filing transaction. A disk error fails the filing, to be tried again later; a fault of the
   * hook's own must not keep the calls out of the journal for ever, so they are filed without what it would have
   * written. SQLite may roll a whole transaction back on an error it cannot undo one statement of (a full disk):
   * what follows would then commit on its own (the intake's mark past rows that are gone), so the filing fails
   * then too, whatever the hook made of the error.
   */
  private fileWithin(events: readonly CallEvent[]): void {
    if (events.length > 0) {
      try {
        this.filingTx(events);
      } catch (err) {
        if (isDiskError(err)) throw err;
      }
    }
    if (!this.db.inTransaction) throw new Error('the journal\'s filing transaction was rolled back by the database; it is tried again');
  }

  /**
   * Move intake batches (up to seq `upTo`) into the journal: their records' rows and events, and the intake's mark
   * of what is filed, in one transaction. Returns the events.
   */
  moveIntake(groups: readonly IntakeGroup[], upTo: number): CallEvent[] {
    const events = this.names.within(() => this.moveTx(groups, upTo));
    this.intake.moved(upTo);
    return events;
  }

  /**
   * What the intake holds moved into the journal, before the journal or the events are read (by the Store's
   * readers, and by a reader of the journal's tables outside the Store: undo). Never inside a transaction, where no
   * filing can run: a reader there (the `filing` hook) reads what the transaction holds.
   */
  caughtUp(): void {
    if (!this.db.inTransaction) this.fileIntake();
  }

  /** See JournalTable.history. */
  history(query: HistoryQuery = {}, brief?: Brief): { calls: HistoryItem[]; nextCursor: number | null } {
    this.caughtUp();
    return this.journal.history(query, brief);
  }

  call(id: string): HistoryItem | null {
    this.caughtUp();
    return this.journal.call(id);
  }

  journalCount(): number {
    this.caughtUp();
    return this.journal.count();
  }

  journalBytes(): number {
    return this.journal.bytes();
  }

  /** See JournalTable.prune. */
  prune(opts: PruneOptions): PruneResult {
    return this.journal.prune(opts);
  }

  addEvent(type: string, server: string | null, tool: string | null, detail: unknown, at?: number): BrokerEvent {
    return this.eventLog.add(type, server, tool, detail, at);
  }

  eventsSince(seq: number, limit: number): BrokerEvent[] {
    this.caughtUp();
    return this.eventLog.since(seq, limit);
  }

  events(query: EventsQuery = {}): { events: BrokerEvent[]; nextCursor: number | null } {
    this.caughtUp();
    return this.eventLog.page(query);
  }

  headSeq(): number {
    this.caughtUp();
    return this.eventLog.headSeq();
  }

  openSession(s: SessionInfo): void {
    this.sessions.open(s);
  }

  endSession(id: string): void {
    this.sessions.end(id);
  }

  endAllSessions(): void {
    this.sessions.endAll();
  }

  replaceCatalog(server: string, verdicts: Iterable<Verdict>): void {
    this.catalogs.replace(server, verdicts);
  }

  catalog(server: string): { name: string; class: string; reasons: string[]; declared: unknown }[] {
    return this.catalogs.list(server);
  }

  insertTicket(t: Ticket): void {
    this.tickets.insert(t);
  }

  endTicket(id: string, resolution: string, remember: Remember | null, reason: string | null): void {
    this.tickets.end(id, resolution, remember, reason);
  }

  closeOrphanTickets(): number {
    return this.tickets.closeOrphans();
  }

  rules(): Rule[] {
    return this.ruleSet.list();
  }

  addRule(rule: Rule, origin?: RowOrigin): void {
    this.ruleSet.add(rule, origin);
  }

  removeRule(id: string): boolean {
    return this.ruleSet.remove(id);
  }

  trusts(server: string): boolean {
    return this.settings.trusts(server);
  }

  setTrust(server: string, on: boolean, origin?: RowOrigin): void {
    this.settings.setTrust(server, on, origin);
  }

  trustedServers(): string[] {
    return this.settings.trustedServers();
  }

  withdrawClaim(server: string, tool: string, evidence: string): boolean {
    return this.catalogs.withdrawClaim(server, tool, evidence);
  }

  withdrawn(server: string): Record<string, string> {
    return this.catalogs.withdrawn(server);
  }
}
