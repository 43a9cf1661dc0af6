/**
 * The Activity page's state over activity.ts: the filter as submitted, the journal's pages loaded as the person
 * scrolls, the calls the event stream reports meanwhile, what undo can do for each row now, and the detail of
 * the row that is open. The page draws it and wires it to the window's stream (`onEvent`) and to its own
 * effects (`reload` on a fresh start, `loadDetail` when the open row is a summary).
 */
import type { BrokerEvent } from '@airlock/proxy-core/protocol/api';
import type { CallSummary } from '@airlock/proxy-core/protocol/events';
import type { AirlockApi } from '@airlock/proxy-core/protocol/ui-contract';
import { type ActivityRow, CallList, emptyFilter, type FilterQuery, filterQuery, lookupQuery, summaryMatches, UndoStamps } from './activity.js';
import type { ExportFormat } from '@airlock/proxy-core/protocol/activity-export';
import { exportPieces } from './activity-export.js';
import { applyPreset, type Preset } from './activity-presets.js';
import { errorText } from './errors.js';
import { undoEffect } from './undo.js';

/** A page of summaries (no arguments, no results): the list draws ~30 rows and loads more as it scrolls. */
export const PAGE = 200;

export class ActivityState {
  /** The filter as its form holds it; it applies when submitted (`reload`), not as it is typed. */
  filter = $state(emptyFilter());
  /** Why the submitted filter is not a query, if it is not. */
  problem = $state<string | null>(null);
  query = $state.raw<FilterQuery>({});
  /** The rows live outside Svelte's reactivity (100,000 of them); `version` says when to draw again. */
  list = $state.raw(new CallList());
  version = $state(0);
  loading = $state(false);
  error = $state<string | null>(null);
  /** Calls the search may match but the stream cannot tell (one count per call, however often it is reported). */
  mayMatch = $state(0);
  selectedId = $state<string | null>(null);
  detailLoading = $state(false);
  detailError = $state<string | null>(null);
  /** The session told as a story in place of the list, if one is. */
  storyId = $state<string | null>(null);
  /** An export being made: how many entries are written so far. */
  exported = $state<number | null>(null);
  exportError = $state<string | null>(null);
  /** The newest wrapper session, for the presets when no row is open. */
  latestSession = $state.raw<{ id: string; client: string } | undefined>(undefined);

  readonly count = $derived.by(() => {
    void this.version;
    return this.list.length;
  });
  /** The open row, a fresh copy so what is drawn changes when the row is updated in place. */
  readonly selected = $derived.by(() => {
    void this.version;
    const r = this.selectedId ? this.list.get(this.selectedId) : undefined;
    return r ? { ...r } : undefined;
  });
  readonly loaded = $derived.by(() => {
    void this.version;
    return this.list.loaded;
  });
  readonly more = $derived.by(() => {
    void this.version;
    return this.list.nextCursor !== null;
  });
  /** The open row while it is only a summary: its journal entry is fetched (`loadDetail`). */
  readonly partialId = $derived(this.selected?.partial ? this.selected.id : null);

  private mayMatchIds = new Set<string>();
  /** Calls the stream reported while the first page loads: applied over it once it is in. */
  private held: CallSummary[] | null = [];
  /** Bumped on every reload: an answer to an older one is dropped. */
  private token = 0;
  private readonly stamps = new UndoStamps();
  /** Live rows whose argument summary is being read (a burst of calls reads at most this many at once). */
  private briefing = new Set<string>();

  constructor(private readonly api: AirlockApi) {}

  /** Row `i` from the top, a fresh copy (`version` is passed so the caller draws again when it changes). */
  rowAt(i: number, _version: number): ActivityRow | undefined {
    const r = this.list.at(i);
    return r ? { ...r } : undefined;
  }

  /** The tool of a shown call (an undo's row names the call it undid). */
  readonly toolOf = (callId: string): string | undefined => this.list.get(callId)?.tool;

  /** Start again from the submitted filter: false (and `problem` says why) when it is not a query. */
  reload(): boolean {
    const q = filterQuery(this.filter);
    if (typeof q === 'string') {
      this.problem = q;
      return false;
    }
    this.problem = null;
    this.query = q;
    this.token++;
    this.list = new CallList();
    this.held = [];
    this.mayMatch = 0;
    this.mayMatchIds = new Set();
    this.loading = false;
    this.version++;
    void this.loadPage(true);
    return true;
  }

  /** Apply a preset over the filter as typed (the open row's session and client, or the newest session's) and reload. */
  async preset(p: Preset): Promise<void> {
    const open = this.selected;
    let session = open?.sessionId ? { id: open.sessionId, client: open.client } : this.latestSession;
    if ((p === 'session' || p === 'client') && !session) {
      try {
        session = this.latestSession = (await this.api.call('sessions.list', { limit: 1 })).sessions[0];
      } catch (err) {
        this.problem = errorText(err);
        return;
      }
    }
    const next = applyPreset(this.filter, p, { now: Date.now(), session });
    if (typeof next === 'string') {
      this.problem = next;
      return;
    }
    this.filter = next;
    this.reload();
  }

  /** The submitted filter's every entry as the pieces of a file (`airlock history --export`'s format). */
  async exportFile(format: ExportFormat): Promise<string[] | null> {
    if (this.exported !== null) return null;
    this.exported = 0;
    this.exportError = null;
    try {
      const { summary: _s, id: _i, ...filters } = this.query;
      return await exportPieces(format, filters, (q) => this.api.call('history.export', q), (n) => (this.exported = n));
    } catch (err) {
      this.exportError = errorText(err);
      return null;
    } finally {
      this.exported = null;
    }
  }

  /** A live row carries no argument summary: read it (and what undo says) from the journal once the call is in. */
  private async brief(id: string): Promise<void> {
    if (this.briefing.has(id) || this.briefing.size >= 20) return;
    this.briefing.add(id);
    const mine = this.token;
    try {
      const r = await this.api.call('history', { id, limit: 1, summary: true });
      const item = r.calls[0];
      const row = this.list.get(id);
      if (mine !== this.token || !item || !row) return;
      if (item.argSummary !== undefined) row.argSummary = item.argSummary;
      if (item.why !== undefined) row.why = item.why;
      this.version++;
    } catch {
      // the row shows no summary until it is opened
    } finally {
      this.briefing.delete(id);
    }
  }

  /** The first page, or the next older one (nothing while one loads or when the journal has no more). */
  async loadPage(first: boolean): Promise<void> {
    if (!first && (this.loading || this.list.nextCursor === null || !this.list.loaded)) return;
    const mine = this.token;
    this.loading = true;
    this.error = null;
    try {
      const before = first ? undefined : (this.list.nextCursor ?? undefined);
      const r = await this.api.call('history', { ...this.query, summary: true, limit: PAGE, ...(before !== undefined ? { before } : {}) });
      if (mine !== this.token) return;
      this.list.appendPage(r.calls, r.nextCursor);
      const waiting = this.held ?? [];
      this.held = null;
      for (const c of waiting) this.applyCall(c);
      this.version++;
    } catch (err) {
      if (mine === this.token) this.error = errorText(err);
    } finally {
      if (mine === this.token) this.loading = false;
    }
  }

  /** An event of the window's stream: a call reported, or a change to what undo can do. */
  onEvent(e: BrokerEvent): void {
    if (e.type === 'call') {
      const c = e.detail as CallSummary;
      if (this.held) this.held.push(c);
      else this.applyCall(c);
      return;
    }
    const effect = undoEffect(e);
    if (effect) {
      let changed = false;
      for (const [id, undo] of effect.set) {
        this.stamps.bump(id);
        changed = this.list.setUndo(id, undo) || changed;
      }
      if (changed) this.version++;
      for (const id of effect.refresh) void this.refreshUndo(id, true);
    } else if (e.type === 'rollback' && this.selectedId) {
      // each undo of the rollback had its own event; the call shown is read again in case its session was it
      void this.refreshUndo(this.selectedId, false);
    }
  }

  private applyCall(c: CallSummary): void {
    const matches = summaryMatches(this.query, c);
    const did = this.list.upsert(c, matches === true);
    const row = did === 'ignored' ? undefined : this.list.get(c.id);
    if (row && row.argSummary === undefined && c.outcome !== 'pending') void this.brief(c.id);
    if (did === 'ignored' && matches === 'unknown') {
      this.mayMatchIds.add(c.id);
      this.mayMatch = this.mayMatchIds.size;
    }
    if (did !== 'ignored') this.version++;
  }

  /** Read a call's entry again for what undo can do for it now (and, for an undo's entry, the call it undid). */
  async refreshUndo(id: string, follow: boolean): Promise<void> {
    if (!this.list.get(id)) return;
    const mine = this.token;
    const stamp = this.stamps.of(id);
    try {
      const r = await this.api.call('history', { id, limit: 1, summary: true });
      const item = r.calls.find((c) => c.id === id);
      if (mine !== this.token || !item || this.stamps.of(id) !== stamp) return;
      this.stamps.bump(id);
      if (this.list.setUndo(id, item.undo)) this.version++;
      // undoing an undo redoes its call: that call can be undone again
      if (follow && item.undo?.undoOf) void this.refreshUndo(item.undo.undoOf, false);
    } catch {
      // the row keeps what it said; the next event or a reload says more
    }
  }

  /** A row the stream reported carries no arguments or result: its journal entry, fetched when it is opened. */
  loadDetail(id: string | null): void {
    const row = id ? this.list.get(id) : undefined;
    if (!id || !row?.partial) return;
    this.detailLoading = true;
    this.detailError = null;
    const stamp = this.stamps.of(id);
    this.api.call('history', lookupQuery(row)).then(
      (r) => {
        const item = r.calls.find((c) => c.id === id);
        // an undo state an event reported while this was read is newer than the entry's
        const kept = this.stamps.of(id) !== stamp ? this.list.get(id)?.undo : undefined;
        if (item) this.list.complete(kept ? { ...item, undo: kept } : item);
        else this.detailError = 'This call is not in the journal yet: it may still be running.';
        this.detailLoading = false;
        this.version++;
      },
      (err: unknown) => {
        this.detailError = errorText(err);
        this.detailLoading = false;
      },
    );
  }
}
