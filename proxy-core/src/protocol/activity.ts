/**
 * What the agent did, in words: who decided a call and why, what undo can do for it, and the sentence a session's
 * story tells of it ("Claude Desktop's filesystem wrote notes/a.md (undoable) — allowed by your rule …"). Pure
 * and shared: the CLI prints these words and the UI draws them, from the same journal entries.
 */
import type { HistoryItem } from './api.js';
import type { UndoInfo } from './undo-api.js';
import { CLIENT_LABELS } from './client-labels.js';

/** The fields of a journal entry the words are made from (a live summary of a call has most of them). */
export type StoryCall = Pick<HistoryItem, 'client' | 'server' | 'tool' | 'decision' | 'decidedBy' | 'outcome'> & {
  class?: HistoryItem['class'];
  detail?: string;
  argSummary?: string;
  undo?: UndoInfo;
};

/** Who made a call's decision. */
export type Decider = 'rule' | 'grant' | 'you' | 'timeout' | 'estop' | 'class' | 'broker' | 'cancelled';

/** The client an undo's own journal entry is made under (the wrapper's undo caller). */
export const UNDO_CLIENT = 'airlock-undo';

const CLIENT_NAMES: Readonly<Record<string, string>> = { ...CLIENT_LABELS, [UNDO_CLIENT]: 'Airlock (undo)' };

/** A client id as a person calls it: "claude-desktop" is "Claude Desktop"; an unknown one keeps its words. */
export function clientLabel(client: string): string {
  const known = CLIENT_NAMES[client];
  if (known) return known;
  const words = client.split(/[-_ ]+/).filter(Boolean);
  return words.length ? words.map((w) => w[0]!.toUpperCase() + w.slice(1)).join(' ') : client;
}

/** "Claude Desktop's", "Airlock (undo)'s", "Jobs'". */
function possessive(name: string): string {
  return /s$/i.test(name) ? `${name}'` : `${name}'s`;
}

/** Who decided the call and why, in one clause ("allowed by your rule r1 (…)", "denied by E-Stop"). */
export function decisionWords(c: Pick<StoryCall, 'decision' | 'decidedBy' | 'detail'>): { by: Decider; text: string } {
  const verb = c.decision === 'allow' ? 'allowed' : 'denied';
  const detail = (c.detail ?? '').trim();
  switch (c.decidedBy) {
    case 'rule': {
      // the policy's reason reads "allowed by rule r1 (…)" or "rule r1 asks (…)": the rule is the person's
      const m = /^(?:allowed|denied) by rule (.+)$/s.exec(detail);
      return { by: 'rule', text: m ? `${verb} by your rule ${m[1]}` : detail ? `${verb} by your rule: ${detail}` : `${verb} by your rule` };
    }
    case 'session':
      return { by: 'grant', text: `${verb} by a grant for this session${detail && detail !== 'approved for this session' ? ` (${detail})` : ''}` };
    case 'user': {
      // the broker words how a person answered (describeVia): "approved by you, with a passkey …", or "from a
      // process …, without a presence proof", which must not be told as "you"
      const how = detail.replace(/^(approved|denied) /, '');
      if (c.decision === 'allow') return { by: 'you', text: how && how !== detail ? `allowed ${how}` : detail ? `allowed when asked: ${detail}` : 'allowed when asked' };
      return { by: 'you', text: detail ? `denied when asked: ${detail}` : 'denied when asked' };
    }
    case 'timeout':
      return { by: 'timeout', text: `${verb}: nobody answered in time${detail ? ` (${detail})` : ''}` };
    case 'estop':
      return { by: 'estop', text: `${verb} by E-Stop` };
    case 'class':
      return { by: 'class', text: detail ? `${verb}: ${detail}` : verb };
    case 'cancelled':
      return { by: 'cancelled', text: `cancelled${detail ? `: ${detail}` : ''}` };
    case 'broker-down':
      return { by: 'broker', text: `${verb}: Airlock was not running` };
    default:
      return { by: 'broker', text: detail ? `${verb} by Airlock: ${detail}` : `${verb} by Airlock` };
  }
}

/** What undo can do for a call, as a row says it. */
export type UndoWord = 'undoable' | 'undone' | 'nothing-to-undo' | 'cannot-undo' | 'not-run' | 'unknown';

export const UNDO_WORDS: Readonly<Record<UndoWord, string>> = {
  undoable: 'undoable',
  undone: 'undone',
  'nothing-to-undo': 'nothing to undo',
  'cannot-undo': 'cannot be undone',
  'not-run': 'did not run',
  unknown: '',
};

export function undoWord(c: Pick<StoryCall, 'decision' | 'outcome' | 'undo'> & { class?: StoryCall['class'] }): UndoWord {
  const u = c.undo;
  if (c.decision !== 'allow' || c.outcome === 'not-run') return 'not-run';
  if (!u) return 'unknown';
  if (u.state === 'undone') return 'undone';
  if (u.available) return 'undoable';
  if (u.state === 'unchanged') return 'nothing-to-undo';
  if (u.kind === null && (c.class === 'read-only-trusted' || c.class === 'read-only-unchecked')) return 'nothing-to-undo';
  if (c.outcome === 'pending') return 'unknown';
  return 'cannot-undo';
}

/** Whether an entry is an undo of another call (its own entry, which undoing redoes that call). */
export function isUndoEntry(c: Pick<StoryCall, 'client' | 'undo'>): boolean {
  return c.undo?.undoOf !== undefined || c.client === UNDO_CLIENT;
}

/** Verbs for tool names that say what they do: [what the name holds, past tense, plain form]. */
const VERBS: readonly (readonly [RegExp, string, string])[] = [
  [/^(write|save|put)|_write$/, 'wrote', 'write'],
  [/^(edit|patch|update|replace|modify)/, 'edited', 'edit'],
  [/^(read|cat|view|open)/, 'read', 'read'],
  [/^(move|rename|mv)/, 'moved', 'move'],
  [/^(create_directory|mkdir|make_dir)/, 'created the folder', 'create the folder'],
  [/^(create|add|new|insert)/, 'created', 'create'],
  [/^(delete|remove|rm|unlink|drop)/, 'deleted', 'delete'],
  [/^(list|ls|directory_tree)/, 'listed', 'list'],
  [/^(search|find|grep|query|lookup)/, 'searched', 'search'],
  [/^(run|exec|execute|shell|bash|sh|terminal|command)/, 'ran', 'run'],
  [/^(send|post|email|mail|message|reply)/, 'sent', 'send'],
  [/^(get|fetch|download|browse|navigate)/, 'fetched', 'fetch'],
];

/** "wrote notes/a.md", "called send_slack on #general"; `plain` gives the form after "tried to". */
export function actionWords(tool: string, summary: string, plain = false): string {
  const name = tool.toLowerCase();
  const verb = VERBS.find(([re]) => re.test(name));
  if (verb && summary) return `${plain ? verb[2] : verb[1]} ${summary}`;
  return `${plain ? 'call' : 'called'} ${tool}${summary ? ` on ${summary}` : ''}`;
}

/**
 * One call as a sentence of its session's story: who, what, the undo state in brackets, then who decided.
 * "Claude Desktop's filesystem wrote notes/a.md (undoable) — allowed by your rule r1 (…)."
 */
export function storySentence(c: StoryCall): string {
  const summary = c.argSummary ?? '';
  const decided = decisionWords(c);
  if (isUndoEntry(c)) {
    const of = c.undo?.undoOf ? ` call ${c.undo.undoOf}` : ' a call';
    const how = c.outcome === 'ok' ? 'undid' : 'tried to undo';
    return `Airlock ${how}${of} through ${c.server}'s ${c.tool}${summary ? ` (${summary})` : ''}${c.undo?.state === 'undone' ? ', and that undo was itself undone' : ''}.`;
  }
  const who = `${possessive(clientLabel(c.client))} ${c.server}`;
  if (c.outcome === 'pending') return `${who} asked to ${actionWords(c.tool, summary, true)} — waiting for a decision.`;
  if (c.decision !== 'allow' || c.outcome === 'not-run') return `${who} tried to ${actionWords(c.tool, summary, true)} — ${decided.text}.`;
  const undo = UNDO_WORDS[undoWord(c)];
  const failed = c.outcome === 'tool-error' || c.outcome === 'rpc-error' ? ', which failed' : c.outcome === 'cancelled' ? ', cancelled while it ran' : c.outcome === 'unknown' ? ', with no known end' : '';
  return `${who} ${actionWords(c.tool, summary)}${failed}${undo ? ` (${undo})` : ''} — ${decided.text}.`;
}

/** A session as a story's heading names it: "Claude Desktop's filesystem, 10:02–10:40". */
export interface SessionLike {
  client: string;
  server: string;
}

export function sessionTitle(s: SessionLike): string {
  return `${possessive(clientLabel(s.client))} ${s.server}`;
}
