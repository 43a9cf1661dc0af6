/**
 * The rules the person set, as the broker holds them: read once from the store and again after each change,
 * so every policy push and catalog view reads them from memory.
 */
import { randomBytes } from 'node:crypto';
import { IpcError } from '../ipc/channel.js';
import type { Rule } from '../policy/rules.js';
import type { RowOrigin } from '../protocol/presence.js';
import type { Clock } from '../util/clock.js';
import type { RecordEvent } from './events.js';
import type { Store } from './db/store.js';

export class RuleBook {
  private cache: Rule[];

  constructor(private readonly o: { store: Store; clock: Clock; record: RecordEvent }) {
    this.cache = o.store.rules();
  }

  list(): Rule[] {
    return this.cache;
  }

  /** `origin`: the decision that made it (its via), sealed with the row. */
  insert(r: Omit<Rule, 'id' | 'createdAt'>, origin: RowOrigin): Rule {
    const rule: Rule = { ...r, id: `r${randomBytes(3).toString('hex')}`, createdAt: this.o.clock.now() };
    this.o.store.addRule(rule, origin);
    this.cache = this.o.store.rules();
    this.o.record('rule-added', null, null, rule);
    return rule;
  }

  remove(id: string): void {
    if (!this.o.store.removeRule(id)) throw new IpcError('not-found', `no rule ${id} (see \`airlock rules\`)`);
    this.cache = this.o.store.rules();
    this.o.record('rule-removed', null, null, { id });
  }
}
