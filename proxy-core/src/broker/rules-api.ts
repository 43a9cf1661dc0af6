/**
 * The rules' methods, and trust in a server's read-only hints: each change reaches every wrapper it bears on
 * before it is reported done, so the very next call sees it.
 */
import type { Rule } from '../policy/rules.js';
import type { CheckedParamsOf } from '../protocol/api.js';
import { rulesAdd, rulesList, rulesRemove, trustList, trustSet } from '../protocol/methods/rules.js';
import type { Bind } from './api/handlers.js';
import type { BrokerParts } from './parts.js';
import { checkArgConditions, checkUndoCondition } from './validate.js';

export function bindRules(on: Bind, b: BrokerParts): void {
  on(rulesList, () => b.ruleBook.list());
  on(rulesAdd, (p) => addRule(b, p));
  on(rulesRemove, (p) => removeRule(b, p.id));
  on(trustSet, async ({ server, on: trust }) => {
    b.store.setTrust(server, trust);
    b.record(trust ? 'trust-on' : 'trust-off', server, null, {});
    await b.sessions.push((s) => s.info.server === server);
    return { server, trust };
  });
  on(trustList, () => b.store.trustedServers());
}

export async function addRule(b: BrokerParts, p: CheckedParamsOf<'rules.add'>): Promise<Rule> {
  checkArgConditions(p.args);
  checkUndoCondition(p.action, p.undoable);
  const rule = b.ruleBook.insert({
    action: p.action,
    server: p.server,
    tool: p.tool,
    ...(p.client !== undefined ? { client: p.client } : {}),
    ...(p.args?.length ? { args: p.args } : {}),
    ...(p.undoable !== undefined ? { undoable: p.undoable } : {}),
  });
  await b.sessions.push();
  return rule;
}

export async function removeRule(b: BrokerParts, id: string): Promise<{ ok: true }> {
  b.ruleBook.remove(id);
  await b.sessions.push();
  return { ok: true };
}
