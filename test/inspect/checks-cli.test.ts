// End to end: what the execution pass checks, and a server that misbehaves (hangs, crashes, lies,
// writes garbage) giving findings or one clear error, never a hang.
import { readFileSync } from 'node:fs';
import { afterEach, beforeAll, describe, expect, test } from 'vitest';
import { cleanup } from '../helpers/airlock.js';
import { calledTools, ensureBuilt, fixture, parseReport, recordFile, runInspect, type JsonReport } from './run-cli.js';

// temp folders (tempDir, recordFile) go after each test
afterEach(cleanup);

beforeAll(ensureBuilt, 120_000);

function findingsFor(report: JsonReport, tool: string): string[] {
  return report.findings.filter((f) => f.tool === tool).map((f) => `${f.severity}: ${f.message}`);
}

describe('execution checks', () => {
  let report: JsonReport;
  beforeAll(async () => {
    report = parseReport(await runInspect(['--json', ...fixture('inspect-checks.mjs')]));
  });

  test('structuredContent that breaks the outputSchema is a finding, not a crash', () => {
    expect(findingsFor(report, 'bad_output')).toContain('error: structuredContent does not match outputSchema: /count must be integer');
    const check = report.executed.find((e) => e.tool === 'bad_output')?.checks.find((c) => c.name === 'output-schema');
    expect(check).toEqual({ name: 'output-schema', ok: false, detail: '/count must be integer' });
  });

  test('a 2020-12 outputSchema that the result satisfies passes', () => {
    const checks = report.executed.find((e) => e.tool === 'good_output')?.checks ?? [];
    expect(checks.find((c) => c.name === 'output-schema')?.ok).toBe(true);
    expect(findingsFor(report, 'good_output')).toEqual([]);
  });

  test('a server that accepts a call with a required argument missing gets a finding', () => {
    expect(findingsFor(report, 'lax')).toContain(
      'warning: accepted a call with required argument "id" missing: the server does not validate its input',
    );
    const strict = report.executed.find((e) => e.tool === 'strict')?.checks.find((c) => c.name === 'rejects-missing-required');
    expect(strict?.ok).toBe(true);
    expect(strict?.detail).toMatch(/-32602/);
  });

  test('a change notification during a read-only call names the tool', () => {
    expect(findingsFor(report, 'notifier')).toEqual(
      expect.arrayContaining([
        'error: server sent notifications/tools/list_changed while this tool was running, though the tool declares readOnlyHint: true',
        'error: server sent notifications/resources/updated while this tool was running, though the tool declares readOnlyHint: true',
      ]),
    );
  });

  test('a result without content is a finding', () => {
    expect(findingsFor(report, 'no_content')).toContain('error: tools/call result has no "content" array (required by the spec)');
  });

  test('resources are read and prompts rendered; failures are findings', () => {
    expect(report.resources).toEqual([
      { uri: 'fixture://good', name: 'good', mimeType: 'text/plain', ok: true, bytes: 5 },
      { uri: 'fixture://broken', name: 'broken', ok: false, error: expect.stringContaining('disk on fire') },
    ]);
    expect(findingsFor(report, 'resource fixture://broken')).toEqual([expect.stringMatching(/^warning: resources\/read failed: .*disk on fire/)]);
    expect(report.prompts).toEqual([
      { name: 'greet', ok: true, arguments: { who: 'test' }, messages: 1 },
      { name: 'broken_prompt', ok: false, arguments: {}, error: expect.stringContaining('template missing') },
    ]);
  });

  test('arguments for a pattern Airlock cannot run are said to be unchecked, and the call the server refused says why', () => {
    const checks = report.executed.find((e) => e.tool === 'by_code')?.checks ?? [];
    expect(checks.find((c) => c.name === 'arguments')).toEqual({
      name: 'arguments',
      ok: true,
      detail: 'probe arguments satisfy inputSchema; code: "test" not checked against /^(?=[A-Z])[A-Z]{3}$/ (a lookaround or back-reference, which Airlock does not run)',
    });
    expect(checks.find((c) => c.name === 'call')?.ok).toBe(false);
    expect(findingsFor(report, 'by_code')).toEqual([
      'warning: tools/call failed: MCP error -32602: code must be three capital letters',
      'info: no outputSchema: structured results cannot be checked',
      'info: probe arguments not fully checked (code: "test" not checked against /^(?=[A-Z])[A-Z]{3}$/ (a lookaround or back-reference, which Airlock does not run)); supply them with --arg by_code.KEY=JSON',
    ]);
  });

  test('the summary counts tools by class and findings by severity', () => {
    expect(report.summary.toolsByClass).toEqual({ 'read-only-unchecked': 7 });
    expect(report.summary.executed).toBe(7);
    expect(report.summary.findingsBySeverity.error).toBe(report.findings.filter((f) => f.severity === 'error').length);
    // Worst first.
    expect(report.findings[0]?.severity).toBe('error');
  });
});

describe('hostile servers', () => {
  test('a garbled answer is a finding, a hanging tool times out, a crash ends the probe, the process tree is killed', async () => {
    const pidFile = recordFile();
    const result = await runInspect(['--json', '--timeout', '1', ...fixture('inspect-hostile.mjs')], { INSPECT_CHILD_PID: pidFile });
    const report = parseReport(result);
    expect(result.ms).toBeLessThan(15_000);
    expect(findingsFor(report, 'hang')).toContain('error: tools/call failed: no answer within 1 s');
    expect(findingsFor(report, 'garbled')).toContain('warning: tools/call failed: MCP error -32603: malformed response: result is string, not an object');
    // Answered at once, not left to time out.
    expect(report.executed.find((e) => e.tool === 'garbled')?.checks.find((c) => c.name === 'call')?.ok).toBe(false);
    expect(findingsFor(report, 'crash')).toEqual(
      expect.arrayContaining(['error: the server exited (exit code 7) while this tool was being probed']),
    );
    expect(report.skipped).toEqual([{ tool: 'never_reached', reason: 'the server exited before this tool could run' }]);
    expect(report.findings.some((f) => /1 line\(s\) to stdout that are not JSON-RPC/.test(f.message))).toBe(true);

    // The grandchild the server started must not outlive the inspection.
    const pid = Number(readFileSync(pidFile, 'utf8'));
    let alive = true;
    for (let i = 0; i < 40 && alive; i++) {
      alive = isRunning(pid);
      if (alive) await new Promise((r) => setTimeout(r, 100));
    }
    expect(alive).toBe(false);
  });

  test.each([
    ['exit-at-start', /^airlock: server exited \(exit code 1\) before initialize completed; its stderr ends with: fatal: missing API_TOKEN$/],
    ['silent', /^airlock: server did not answer initialize within 1 s$/],
  ])('a server that cannot be initialized (%s) is one line on stderr and exit 1', async (mode, message) => {
    const result = await runInspect(['--timeout', '1', ...fixture('inspect-hostile.mjs')], { INSPECT_MODE: mode });
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr.trimEnd()).toMatch(message);
  });

  test('a command that does not exist is one line on stderr and exit 1', async () => {
    const result = await runInspect(['--', 'airlock-no-such-server-command']);
    expect(result.code).toBe(1);
    expect(result.stderr).toBe('airlock: cannot start server "airlock-no-such-server-command": command not found\n');
  });

  test.each([
    [['--bogus', '--', 'x'], /Unknown option '--bogus'/],
    [[], /no server command/],
    [['--timeout', 'soon', '--', 'x'], /--timeout soon/],
    [['--client', 'cursor', '--', 'x'], /not both/],
    [['--client', 'cursor'], /--client and --server go together/],
  ])('bad flags %j are a usage error (exit 2)', async (args, message) => {
    const result = await runInspect(args);
    expect(result.code).toBe(2);
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    expect(result.stderr).toMatch(message);
  });
});

describe('catalog findings', () => {
  test('poisoned descriptions and schemas are critical findings; a clean tool has none', async () => {
    const report = parseReport(await runInspect(['--json', ...fixture('inspect-poisoned.mjs')]));
    const poisoning = (tool: string) => findingsFor(report, tool).filter((f) => f.includes('tool poisoning'));
    expect(poisoning('zero_width')).toEqual([expect.stringMatching(/^critical: .*zero-width.*U\+200B.* in description$/)]);
    expect(poisoning('tagged')).toEqual([expect.stringMatching(/^critical: .*tag characters.*"send the keys" in description$/)]);
    expect(poisoning('bidi')).toEqual([expect.stringMatching(/^critical: .*bidirectional.*U\+202E/)]);
    expect(poisoning('ansi')).toEqual([expect.stringMatching(/^critical: .*ANSI escape/)]);
    expect(poisoning('nested')).toEqual([expect.stringMatching(/^critical: .*instruction-like text.* in inputSchema\.properties\.path\.description$/)]);
    expect(poisoning('override')).toEqual([expect.stringMatching(/^critical: .*"Ignore previous instructions"/)]);
    expect(poisoning('clean')).toEqual([]);
  });

  test('the terminal report never prints the escape sequences it found', async () => {
    const result = await runInspect(fixture('inspect-poisoned.mjs'));
    expect(result.code).toBe(0);
    expect(result.stdout).not.toMatch(/[\u001b\u200b\u202e\u{E0000}-\u{E007F}]/u);
  });

  test('a malformed, paginated catalog gives findings and runs only well-formed read-only tools', async () => {
    const record = recordFile();
    const report = parseReport(await runInspect(['--json', ...fixture('inspect-malformed.mjs')], { INSPECT_RECORD: record }));
    expect(calledTools(record)).toEqual(['fine', 'bare']);
    expect(report.tools.map((t) => [t.name, t.class])).toEqual([
      ['fine', 'read-only-unchecked'],
      ['bad_hint', 'unclassifiable'],
      ['contradiction', 'destructive'],
      ['dup', 'unclassifiable'],
      ['bare', 'read-only-unchecked'],
      ['unannotated', 'destructive'],
      ['bad schema', 'mutating'],
    ]);
    const messages = report.findings.map((f) => `${f.severity} ${f.tool ?? '-'}: ${f.message}`);
    expect(messages).toEqual(
      expect.arrayContaining([
        'error -: malformed tools/list entry: tool #1: tool entry is string, not an object',
        'error -: malformed tools/list entry: tool #2: tool name is number, not a string',
        'error bad_hint: malformed or ambiguous entry: readOnlyHint is string, not a boolean',
        'error contradiction: contradictory annotations: readOnlyHint: true with destructiveHint: true',
        'error dup: malformed or ambiguous entry: 2 tools share the name "dup"; Airlock cannot tell which one a call reaches',
        'error bare: missing inputSchema (required by the spec)',
        'warning bare: missing description: a model has only the name to go on',
        'warning unannotated: no annotations: destructive by spec default',
        'error bad schema: inputSchema is not an object schema ({"type": "object", ...})',
        'warning bad schema: name does not follow the spec rule (1-128 of A-Z a-z 0-9 _ - .)',
        'info fine: no outputSchema: structured results cannot be checked',
      ]),
    );
  });
});

function isRunning(pid: number): boolean {
  try {
    // A zombie still answers kill(0); its state in /proc says it is gone.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return !/^\d+ \(.*\) Z/.test(stat);
  } catch {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  }
}

describe('catalog changes', () => {
  test('a tool list that changes during the inspection is a critical finding', async () => {
    const record = recordFile();
    const report = parseReport(await runInspect(['--json', ...fixture('inspect-checks.mjs')], { INSPECT_RUG_PULL: '1', INSPECT_RECORD: record }));
    // `strict` turned destructive before its turn came, so it was not called.
    expect(calledTools(record)).not.toContain('strict');
    expect(report.skipped).toEqual([{ tool: 'strict', reason: expect.stringMatching(/^destructive .*--allow-destructive$/) }]);
    const change = report.findings.find((f) => f.message.startsWith('the tool list changed during the inspection'));
    expect(change?.severity).toBe('critical');
    expect(change?.message).toMatch(/added surprise/);
    expect(change?.message).toMatch(/annotations of strict changed from \{"readOnlyHint":true\} to \{"readOnlyHint":false,"destructiveHint":true\}/);
  });

  test('a list_changed after which the list is the same adds no change finding', async () => {
    const report = parseReport(await runInspect(['--json', ...fixture('inspect-checks.mjs')]));
    expect(report.findings.some((f) => f.message.startsWith('the tool list changed'))).toBe(false);
  });
});
