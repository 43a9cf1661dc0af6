import { describe, expect, test } from 'vitest';
import { clientLabel, decisionWords, isUndoEntry, sessionTitle, storySentence, undoWord, type StoryCall } from '../../../proxy-core/src/protocol/activity.js';

const base: StoryCall = { client: 'claude-desktop', server: 'filesystem', tool: 'write_file', decision: 'allow', decidedBy: 'rule', outcome: 'ok', class: 'mutating', detail: 'allowed by rule r1 (allow write_file on filesystem)', argSummary: 'notes/a.md' };

describe('decisionWords', () => {
  test('each way a call is decided', () => {
    expect(decisionWords(base)).toEqual({ by: 'rule', text: 'allowed by your rule r1 (allow write_file on filesystem)' });
    expect(decisionWords({ ...base, decidedBy: 'session', detail: 'approved for this session' })).toEqual({ by: 'grant', text: 'allowed by a grant for this session' });
    expect(decisionWords({ ...base, decidedBy: 'user', detail: 'approved by you, with a passkey in the browser' }).text).toBe('allowed by you, with a passkey in the browser');
    expect(decisionWords({ ...base, decidedBy: 'timeout', decision: 'deny', detail: '' }).text).toBe('denied: nobody answered in time');
    expect(decisionWords({ ...base, decidedBy: 'estop', decision: 'deny', detail: 'E-Stop is on' })).toEqual({ by: 'estop', text: 'denied by E-Stop' });
  });

  test('an approval without a presence proof is not told as "you"', () => {
    const w = decisionWords({ ...base, decidedBy: 'user', detail: 'approved from a process without a terminal (pid 12, sh), without a presence proof' });
    expect(w.text).toBe('allowed from a process without a terminal (pid 12, sh), without a presence proof');
    expect(w.text).not.toMatch(/\byou\b/);
  });
});

describe('undoWord', () => {
  test('undoable, undone, nothing to undo for reads, cannot be undone, did not run', () => {
    expect(undoWord({ ...base, undo: { available: true, kind: 'snapshot', state: 'ready' } })).toBe('undoable');
    expect(undoWord({ ...base, undo: { available: false, kind: 'snapshot', state: 'undone' } })).toBe('undone');
    expect(undoWord({ ...base, class: 'read-only-trusted', undo: { available: false, kind: null } })).toBe('nothing-to-undo');
    expect(undoWord({ ...base, undo: { available: false, kind: null } })).toBe('cannot-undo');
    expect(undoWord({ ...base, decision: 'deny', outcome: 'not-run' })).toBe('not-run');
    expect(undoWord(base)).toBe('unknown');
  });
});

describe('storySentence', () => {
  test('a write allowed by a rule, undoable', () => {
    expect(storySentence({ ...base, undo: { available: true, kind: 'snapshot', state: 'ready' } })).toBe(
      "Claude Desktop's filesystem wrote notes/a.md (undoable) — allowed by your rule r1 (allow write_file on filesystem).",
    );
  });

  test('a denied call, an unknown tool, a failure, an undo', () => {
    expect(storySentence({ ...base, decision: 'deny', decidedBy: 'estop', outcome: 'not-run' })).toBe("Claude Desktop's filesystem tried to write notes/a.md — denied by E-Stop.");
    expect(storySentence({ ...base, tool: 'frobnicate', argSummary: '', outcome: 'tool-error', undo: { available: false, kind: null } })).toMatch(/^Claude Desktop's filesystem called frobnicate, which failed \(cannot be undone\)/);
    const undo: StoryCall = { ...base, client: 'airlock-undo', undo: { available: true, kind: 'snapshot', undoOf: 'c1' } };
    expect(isUndoEntry(undo)).toBe(true);
    expect(storySentence(undo)).toBe("Airlock undid call c1 through filesystem's write_file (notes/a.md).");
  });

  test('client names', () => {
    expect(clientLabel('claude-desktop')).toBe('Claude Desktop');
    expect(clientLabel('my_agent')).toBe('My Agent');
    expect(sessionTitle({ client: 'cursor', server: 'github' })).toBe("Cursor's github");
  });
});
