/**
 * What a loosening call allows, in the words a person is shown before they touch: "Allow the held call T-3:
 * files → write_file (arguments sha256 1f2e…), once". The statement is bound into the challenge a proof answers
 * (challenges.ts), and it is what the journal and the events say was allowed.
 */
import { canonicalJson } from '../../util/canonical-json.js';
import type { ArgCondition, Rule, Ticket } from '../../protocol/api.js';
import { UserMethod } from '../../protocol/names.js';

export interface StatementLookup {
  ticket(id: string): Ticket | null;
  rule(id: string): Rule | null;
  /** A passkey's name by its id. */
  passkey?(id: string): string | null;
}

const MAX = 600;

function conditions(args: readonly ArgCondition[] | undefined): string {
  if (!args?.length) return '';
  return ` when ${args.map((c) => (c.kind === 'exact' ? `${c.arg} is ${JSON.stringify(c.value)}` : c.kind === 'range' ? `${c.arg} in [${c.min ?? ''}, ${c.max ?? ''}]` : `${c.arg} matches ${c.glob}`)).join(' and ')}`;
}

/** "for 900 s and 10 calls", "until 2026-12-01T18:00:00.000Z": what a grant asked for, as the proof binds it. */
function grantWords(g: { seconds?: number; until?: number; calls?: number }): string {
  const parts = [g.seconds !== undefined ? `for ${g.seconds} s` : '', g.until !== undefined ? `until ${new Date(g.until).toISOString()}` : '', g.calls !== undefined ? `for the next ${g.calls} calls like it` : ''];
  return parts.filter(Boolean).join(' and ');
}

function cut(text: string): string {
  return text.length > MAX ? `${text.slice(0, MAX - 1)}…` : text;
}

/** The statement for `method` with its checked params. */
export function statementOf(method: string, params: Record<string, unknown>, lookup: StatementLookup): string {
  const p = params as Record<string, any>;
  switch (method) {
    case UserMethod.approve: {
      const t = lookup.ticket(String(p.id));
      const what = t ? `${t.server} → ${t.tool} (arguments sha256 ${t.argsSha256.slice(0, 16)}…)` : 'a call that is no longer held';
      const rule = `${conditions(p.args)}${p.undoable ? ', only calls Airlock can undo' : ''}`;
      const how = p.remember === 'session' ? ', and its tool for the rest of the session' : p.remember === 'always' && p.grant ? `, and a grant ${grantWords(p.grant)} (an allow rule${rule})` : p.remember === 'always' ? `, and always from now on (an allow rule${rule})` : ', once';
      return cut(`Allow the held call ${p.id}: ${what}${how}`);
    }
    case UserMethod.rulesAdd:
      return cut(`Add a rule: allow ${p.server} → ${p.tool}${p.client ? ` from ${p.client}` : ''}${conditions(p.args)}${p.undoable === true ? ', only calls Airlock can undo' : ''}`);
    case UserMethod.rulesRemove: {
      const r = lookup.rule(String(p.id));
      return cut(`Remove the rule ${p.id}${r ? ` (${r.action} ${r.server} → ${r.tool})` : ''}`);
    }
    case UserMethod.trustSet:
      return cut(`Trust the read-only hints of ${p.server}: its tools that say they only read run without asking`);
    case UserMethod.estop:
      return 'Turn E-Stop off: wrapped servers take calls again';
    case UserMethod.settingsSet:
      return cut(`Set ${p.key} to ${p.value}`);
    case UserMethod.pinsAccept:
      return cut(`Accept the changed definition of ${p.server} → ${p.tool ?? 'every changed tool'}`);
    case UserMethod.unprotect:
      return cut(`Unwrap ${canonicalJson(params)} from Airlock: its calls would no longer be checked`);
    case UserMethod.passkeyRegister:
      return cut(`Register another passkey (${p.name}): it will approve as your other passkeys do`);
    case UserMethod.passkeyRemove: {
      const name = lookup.passkey?.(String(p.id));
      return cut(`Remove the passkey ${name ?? p.id}${name ? '' : ' (not registered)'}`);
    }
    case UserMethod.presenceConfirm:
      return 'Confirm that this broker runs without presence proofs';
    default:
      return cut(`${method} ${canonicalJson(params)}`);
  }
}
