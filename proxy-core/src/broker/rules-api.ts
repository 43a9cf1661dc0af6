/**
 * The rules' methods, and trust in a server's read-only hints: each change reaches every wrapper it bears on
 * before it is reported done, so the very next call sees it.
 */
import type { Rule } from '../policy/rules.js';
import type { CheckedParamsOf } from '../protocol/api.js';
import { rulesAdd, rulesList, rulesRemove, trustList, trustSet } from '../protocol/methods/rules.js';
import type { Via } from '../protocol/presence.js';
import type { Bind } from './api/handlers.js';
import { IN_PROCESS } from './tickets/api.js';
import type { BrokerParts } from './parts.js';
import { checkArgConditions, checkUndoCondition } from './validate.js';

export function bindRules(on: Bind, b: BrokerParts): void {
  on(rulesList, () => b.ruleBook.list());
  on(rulesAdd, (p, _call, via) => addRule(b, p, via));
  on(rulesRemove, (p) => removeRule(b, p.id));
  on(trustSet, async ({ server, on: trust }, _call, via) => {
    b.store.setTrust(server, trust, via);
    b.record(trust ? 'trust-on' : 'trust-off', server, null, {});
    await b.sessions.push((s) => s.info.server === server);
    return { server, trust };
  });
  on(trustList, () => b.store.trustedServers());
}

/** `via`: how the decision was made, sealed with the rule (db/seals.ts). */
export async function addRule(b: BrokerParts, p: CheckedParamsOf<'rules.add'>, via: Via = IN_PROCESS): Promise<Rule> {
  checkArgConditions(p.args);
  checkUndoCondition(p.action, p.undoable);
  const rule = b.ruleBook.insert({
    action: p.action,
    server: p.server,
    tool: p.tool,
    ...(p.client !== undefined ? { client: p.client } : {}),
    ...(p.args?.length ? { args: p.args } : {}),
    ...(p.undoable !== undefined ? { undoable: p.undoable } : {}),
  }, via);
  await b.sessions.push();
  return rule;
}

export async function removeRule(b: BrokerParts, id: string): Promise<{ ok: true }> {
  b.ruleBook.remove(id);
  await b.sessions.push();
  return { ok: true };
}
