/**
 * Who is signed in to the UI host, and with what. A session is two secrets: a cookie (HttpOnly,
 * SameSite=Strict, one per browser: every sign-in of a browser that has one keeps it) and a key of the one tab
 * that signed in, which the page keeps and sends as a header on every API call. Cookies are not kept
 * apart by port, so any listener on another loopback port can be handed the cookie by the browser; the key is
 * never in a cookie and never in an answer a request can get with the cookie alone, so the cookie by itself
 * opens nothing.
 *
 * - Sign-in links are single-use and live `linkTtlMs` (2 minutes): one that lands in a log or the browser's
 *   history is spent or stale by the time anyone else reads it.
 * - A session ends when idle for `idleMs` (12 h) or at `maxAgeMs` (7 days). At `maxSessions` a new sign-in is
 *   refused: a live session is never evicted to make room.
 * - The event stream (an EventSource cannot send headers) is opened with a one-time ticket bound to the
 *   session, handed out to an authenticated POST.
 * Only SHA-256 hashes of the secrets are kept (and persisted, when a store is given), and a lookup is by the
 * hash of what was sent, so the time it takes says nothing about a valid value.
 */
import { createHash } from 'node:crypto';
import { newSecret } from './security.js';
import { type Clock, systemClock } from '../util/clock.js';

export interface SessionRecord {
  cookieHash: string;
  keyHash: string;
  created: number;
  lastSeen: number;
}

/** Where session records outlive the process (hashes only): see session-file.ts. */
export interface SessionStore {
  load(): SessionRecord[];
  save(records: SessionRecord[]): void;
}

export interface SessionLimits {
  linkTtlMs: number;
  maxLinks: number;
  idleMs: number;
  maxAgeMs: number;
  maxSessions: number;
  ticketTtlMs: number;
  maxTicketsPerSession: number;
}

export const SESSION_LIMITS: SessionLimits = {
  linkTtlMs: 2 * 60_000,
  maxLinks: 16,
  idleMs: 12 * 3600_000,
  maxAgeMs: 7 * 24 * 3600_000,
  maxSessions: 32,
  ticketTtlMs: 60_000,
  maxTicketsPerSession: 8,
};

/** lastSeen is written to the store at most this often per session (it only moves the idle deadline). */
const PERSIST_SEEN_MS = 5 * 60_000;

export const hashOf = (s: string): string => createHash('sha256').update(s, 'utf8').digest('hex');

export type Redeemed = { ok: true; cookie: string; key: string } | { ok: false; why: 'unknown' | 'full' };

export class UiSessions {
  private readonly links = new Map<string, number>(); // hash -> expiry
  private readonly sessions = new Map<string, SessionRecord>(); // keyHash -> record (one per signed-in tab)
  private readonly tickets = new Map<string, { keyHash: string; expires: number }>();
  private readonly limits: SessionLimits;
  private readonly persisted = new Map<string, number>(); // keyHash -> lastSeen as last saved

  constructor(
    limits: Partial<SessionLimits> = {},
    private readonly clock: Pick<Clock, 'now'> = systemClock,
    private readonly store?: SessionStore,
  ) {
    this.limits = { ...SESSION_LIMITS, ...limits };
    for (const r of store?.load() ?? []) {
      this.sessions.set(r.keyHash, r);
      this.persisted.set(r.keyHash, r.lastSeen);
    }
    this.sweep();
  }

  /** A fresh single-use sign-in token. Past maxLinks, the oldest unused link is dropped (a link is no session). */
  issueLink(): string {
    this.sweep();
    const token = newSecret();
    this.links.set(hashOf(token), this.clock.now() + this.limits.linkTtlMs);
    while (this.links.size > this.limits.maxLinks) this.links.delete(this.links.keys().next().value as string);
    return token;
  }

  /**
   * Spend a sign-in token: a new session, or why not. An unknown, used or stale token is 'unknown'. A browser
   * that sends a live cookie keeps it (its other tabs stay signed in); the new key is this tab's.
   */
  redeem(token: string | null, cookies: readonly string[] = []): Redeemed {
    this.sweep();
    if (typeof token !== 'string' || token.length === 0 || token.length > 256) return { ok: false, why: 'unknown' };
    const h = hashOf(token);
    if (!this.links.has(h)) return { ok: false, why: 'unknown' };
    // full: the link stays unspent, so it works once a session has ended (or been signed out)
    if (this.sessions.size >= this.limits.maxSessions) return { ok: false, why: 'full' };
    this.links.delete(h);
    const live = cookies.find((c) => this.byCookie([c]) !== null);
    const cookie = live ?? newSecret();
    const key = newSecret();
    const now = this.clock.now();
    this.sessions.set(hashOf(key), { cookieHash: hashOf(cookie), keyHash: hashOf(key), created: now, lastSeen: now });
    this.save();
    return { ok: true, cookie, key };
  }

  /** A live session of one of these cookie values, cookie alone (static files: nothing secret in them). */
  byCookie(cookies: readonly string[]): SessionRecord | null {
    this.sweep();
    const hashes = new Set(cookies.filter((c) => c.length > 0 && c.length <= 256).map(hashOf));
    for (const s of this.sessions.values()) if (hashes.has(s.cookieHash)) return s;
    return null;
  }

  /** The session of this key, if one of these cookies is its browser's (the API); it counts as activity. */
  authenticate(cookies: readonly string[], key: string | undefined): SessionRecord | null {
    if (typeof key !== 'string' || key.length === 0 || key.length > 256) return null;
    this.sweep();
    const s = this.sessions.get(hashOf(key));
    if (!s || !this.cookieOf(s, cookies)) return null;
    this.touch(s);
    return s;
  }

  private cookieOf(s: SessionRecord, cookies: readonly string[]): boolean {
    return cookies.some((c) => c.length > 0 && c.length <= 256 && hashOf(c) === s.cookieHash);
  }

  /** A one-time ticket for the event stream of this session. */
  issueTicket(s: SessionRecord): string {
    this.sweep();
    const mine = [...this.tickets].filter(([, t]) => t.keyHash === s.keyHash);
    for (const [h] of mine.slice(0, Math.max(0, mine.length - this.limits.maxTicketsPerSession + 1))) this.tickets.delete(h);
    const ticket = newSecret();
    this.tickets.set(hashOf(ticket), { keyHash: s.keyHash, expires: this.clock.now() + this.limits.ticketTtlMs });
    return ticket;
  }

  /** Spend a ticket: it must be live and of the session one of these cookies names. */
  redeemTicket(ticket: string | null, cookies: readonly string[]): SessionRecord | null {
    this.sweep();
    if (typeof ticket !== 'string' || ticket.length === 0 || ticket.length > 256) return null;
    const h = hashOf(ticket);
    const t = this.tickets.get(h);
    if (!t) return null;
    const s = this.sessions.get(t.keyHash);
    if (!s || !this.cookieOf(s, cookies)) return null;
    this.tickets.delete(h);
    this.touch(s);
    return s;
  }

  signOut(s: SessionRecord): void {
    this.drop(s.keyHash);
    this.save();
  }

  has(s: SessionRecord): boolean {
    return this.sessions.get(s.keyHash) === s;
  }

  get size(): number {
    this.sweep();
    return this.sessions.size;
  }

  clear(): void {
    this.links.clear();
    this.tickets.clear();
  }

  private touch(s: SessionRecord): void {
    s.lastSeen = this.clock.now();
    if (s.lastSeen - (this.persisted.get(s.keyHash) ?? 0) >= PERSIST_SEEN_MS) this.save();
  }

  private drop(keyHash: string): void {
    this.sessions.delete(keyHash);
    for (const [h, t] of this.tickets) if (t.keyHash === keyHash) this.tickets.delete(h);
  }

  /** Drop what has expired. */
  private sweep(): void {
    const now = this.clock.now();
    for (const [h, expires] of this.links) if (expires <= now) this.links.delete(h);
    for (const [h, t] of this.tickets) if (t.expires <= now) this.tickets.delete(h);
    let changed = false;
    for (const s of [...this.sessions.values()]) {
      if (now - s.lastSeen >= this.limits.idleMs || now - s.created >= this.limits.maxAgeMs || s.created > now + 60_000) {
        this.drop(s.keyHash);
        changed = true;
      }
    }
    if (changed) this.save();
  }

  private save(): void {
    if (!this.store) return;
    const records = [...this.sessions.values()].map((s) => ({ ...s }));
    this.persisted.clear();
    for (const r of records) this.persisted.set(r.keyHash, r.lastSeen);
    this.store.save(records);
  }
}
