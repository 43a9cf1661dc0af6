/**
 * The rules the person set, as the broker holds them: read once from the store and again after each change,
 * so every policy push and catalog view reads them from memory. Grants (rules that end by themselves) end
 * here too: a timer removes each at its instant (the wrappers already stop applying it then, by their own
 * clocks), and a counted grant's calls are spent here, one at a time (spend()).
 */
import { randomBytes } from 'node:crypto';
import { IpcError } from '../ipc/channel.js';
import { inForce, type Rule } from '../policy/rules.js';
import type { RowOrigin } from '../protocol/presence.js';
import type { Clock, Timer } from '../util/clock.js';
import type { RecordEvent } from './events.js';
import type { Store } from './db/store.js';

export interface RuleBookOptions {
  store: Store;
  clock: Clock;
  record: RecordEvent;
  /** Called after grants ended by themselves (their time came, their calls were spent): push the new policy. */
  ended?: () => void;
}

export class RuleBook {
  private cache: Rule[];
  private timer: Timer | undefined;
  /** Called after grants ended by themselves (the broker pushes the new policy). */
  ended: () => void;

  constructor(private readonly o: RuleBookOptions) {
    this.ended = o.ended ?? (() => {});
    this.cache = o.store.rules();
    this.sweep();
  }

  list(): Rule[] {
    return this.cache;
  }

  /** `origin`: the decision that made it (its via), sealed with the row. */
  insert(r: Omit<Rule, 'id' | 'createdAt'>, origin: RowOrigin): Rule {
    const rule: Rule = { ...r, id: `r${randomBytes(3).toString('hex')}`, createdAt: this.o.clock.now() };
    this.o.store.addRule(rule, origin);
    this.reload();
    this.o.record('rule-added', null, null, rule);
    return rule;
  }

  remove(id: string): void {
    if (!this.o.store.removeRule(id)) throw new IpcError('not-found', `no rule ${id} (see \`airlock rules\`)`);
    this.reload();
    this.o.record('rule-removed', null, null, { id });
  }

  /**
   * Spend one call of the counted grant `id` for a call it matched: the calls left after it, or null when it
   * has none left (or is not a grant in force). The broker is one thread and the store one connection, so
   * two wrappers asking at the same instant spend two calls, never one call twice. The last call spent ends it.
   */
  spend(id: string): { left: number; rule: Rule } | null {
    const rule = this.cache.find((r) => r.id === id);
    if (!rule || rule.action !== 'allow' || rule.calls === undefined || !inForce(rule, this.o.clock.now())) return null;
    const spent = this.o.store.ruleSet.spend(id);
    if (!spent) return null;
    if (spent.left === 0) {
      this.o.store.removeRule(id);
      this.reload();
      this.o.record('rule-removed', null, null, { id, ended: 'its calls were spent' });
      this.ended();
    } else this.reload();
    return { left: spent.left, rule: { ...rule, calls: spent.left } };
  }

  private reload(): void {
    this.cache = this.o.store.rules();
    this.sweep();
  }

  /** Remove the grants whose time has come, and arm a timer for the next one to end. */
  private sweep(): void {
    this.o.clock.clearTimeout(this.timer);
    this.timer = undefined;
    const now = this.o.clock.now();
    const over = this.cache.filter((r) => !inForce(r, now));
    for (const r of over) {
      this.o.store.removeRule(r.id);
      this.o.record('rule-removed', null, null, { id: r.id, ended: r.calls === 0 ? 'its calls were spent' : 'its time ended' });
    }
    if (over.length) {
      this.cache = this.o.store.rules();
      // not in the constructor's own call: the broker wires the push after building the book
      queueMicrotask(() => this.ended());
    }
    // (a loop, not Math.min(...all): a spread of some 125,000 rules overflows the stack)
    let next = Infinity;
    for (const r of this.cache) if (r.expiresAt !== undefined && r.expiresAt < next) next = r.expiresAt;
    if (Number.isFinite(next)) this.timer = this.o.clock.setTimeout(() => this.sweep(), Math.max(0, next - now));
  }

  /** Stop the timer (the broker is stopping). */
  close(): void {
    this.o.clock.clearTimeout(this.timer);
  }
}
