// End to end: the ExecutionPolicy as the server experienced it. The fixtures record every tools/call they
// receive, so these tests check what actually ran, not what the report claims.
import { afterEach, beforeAll, describe, expect, test } from 'vitest';
import { cleanup } from '../helpers/airlock.js';
import { calledTools, ensureBuilt, fixture, parseReport, recordFile, recordedCalls, runInspect } from './run-cli.js';

// temp folders (tempDir, recordFile) go after each test
afterEach(cleanup);

beforeAll(ensureBuilt, 120_000);

async function inspectSafety(flags: string[], env: Record<string, string> = {}) {
  const record = recordFile();
  const result = await runInspect(['--json', ...flags, ...fixture('inspect-safety.mjs')], { INSPECT_RECORD: record, ...env });
  return { report: parseReport(result), called: calledTools(record), record };
}

describe('default policy', () => {
  test('a server whose tools declare no annotations executes nothing, and says so', async () => {
    const record = recordFile();
    const result = await runInspect(['--json', ...fixture('inspect-unannotated.mjs')], { INSPECT_RECORD: record });
    const report = parseReport(result);
    // The fixture exits non-zero on any call; the record is the proof that none was made.
    expect(recordedCalls(record)).toEqual([]);
    expect(report.executed).toEqual([]);
    expect(report.skipped.map((s) => s.reason)).toEqual(Array(3).fill('no annotations: destructive by spec default'));
    const none = report.findings.find((f) => f.message.startsWith('0 of 3 tools executed: none permitted by policy'));
    expect(none?.message).toMatch(/readOnlyHint/);
    expect(none?.message).toMatch(/--allow-mutations/);
    expect(report.findings.some((f) => f.tool === undefined && /3 of 3 tools declare no annotations/.test(f.message))).toBe(true);
  });

  test('runs only the tools that declare readOnlyHint: true', async () => {
    const { report, called } = await inspectSafety([], { INSPECT_PANIC: '1' });
    expect(called).toEqual(['read_status', 'search']);
    expect(report.executed.map((e) => e.tool)).toEqual(['read_status', 'search']);
    expect(Object.fromEntries(report.skipped.map((s) => [s.tool, s.reason]))).toEqual({
      add_note: expect.stringContaining('--allow-mutations'),
      drop_table: expect.stringContaining('--allow-destructive'),
      send_email: 'no annotations: destructive by spec default',
    });
    expect(report.policy).toMatch(/read-only tools only/);
  });

  test('each executed tool gets a p50 latency over three runs and the checks', async () => {
    const { report, record } = await inspectSafety([]);
    const search = report.executed.find((e) => e.tool === 'search');
    expect(search?.runs).toBe(3);
    expect(typeof search?.latencyMsP50).toBe('number');
    expect(search?.checks.map((c) => c.name)).toEqual(['arguments', 'call', 'result', 'rejects-missing-required']);
    expect(search?.checks.every((c) => c.ok)).toBe(true);
    // Three runs with generated arguments, then one without the required "query".
    expect(recordedCalls(record).filter((c) => c.tool === 'search').map((c) => c.arguments)).toEqual([
      { query: 'test' },
      { query: 'test' },
      { query: 'test' },
      {},
    ]);
  });
});

describe('flags', () => {
  test('--allow-mutations adds tools that declare destructiveHint: false, nothing more', async () => {
    const { report, called, record } = await inspectSafety(['--allow-mutations'], { INSPECT_PANIC: '1' });
    expect(called).toEqual(['read_status', 'search', 'add_note']);
    expect(report.skipped.map((s) => s.tool)).toEqual(['drop_table', 'send_email']);
    // A change not declared idempotent is made once (plus the call without its required argument).
    expect(recordedCalls(record).filter((c) => c.tool === 'add_note').map((c) => c.arguments)).toEqual([{ text: 'test' }, {}]);
    expect(report.executed.find((e) => e.tool === 'add_note')?.runs).toBe(1);
  });

  test('--allow-destructive runs everything', async () => {
    const { report, called } = await inspectSafety(['--allow-destructive']);
    expect(called).toEqual(['read_status', 'search', 'add_note', 'drop_table', 'send_email']);
    expect(report.skipped).toEqual([]);
    expect(report.policy).toMatch(/test tenant/);
  });

  test('--only narrows the permitted set by name', async () => {
    const { report, called } = await inspectSafety(['--only', 'search']);
    expect(called).toEqual(['search']);
    expect(report.skipped.find((s) => s.tool === 'read_status')?.reason).toBe('not listed in --only');
  });

  test('--only does not widen the policy', async () => {
    const { report, called } = await inspectSafety(['--only', 'add_note,drop_table'], { INSPECT_PANIC: '1' });
    expect(called).toEqual([]);
    expect(report.findings.some((f) => f.message.startsWith('0 of 5 tools executed: none permitted by policy'))).toBe(true);
  });

  test('--only with --allow-mutations runs just that mutating tool', async () => {
    const { called } = await inspectSafety(['--allow-mutations', '--only', 'add_note']);
    expect(called).toEqual(['add_note']);
  });

  test('--deny removes tools even under --allow-destructive', async () => {
    const { report, called } = await inspectSafety(['--allow-destructive', '--deny', 'send_email', '--deny', 'drop_table']);
    expect(called).toEqual(['read_status', 'search', 'add_note']);
    expect(report.skipped).toEqual([
      { tool: 'drop_table', reason: 'excluded by --deny' },
      { tool: 'send_email', reason: 'excluded by --deny' },
    ]);
  });

  test('an --only or --deny name the server does not list is a finding', async () => {
    const { report } = await inspectSafety(['--deny', 'serach']);
    expect(report.findings).toContainEqual({ severity: 'warning', message: '--only/--deny names "serach", which the server does not list' });
  });

  test('--arg supplies a real value in place of the generated one', async () => {
    const { report, record } = await inspectSafety(['--arg', 'search.query="hello world"', '--arg', 'search.limit=5']);
    const calls = recordedCalls(record).filter((c) => c.tool === 'search');
    expect(calls[0]?.arguments).toEqual({ query: 'hello world', limit: 5 });
    expect(report.executed.find((e) => e.tool === 'search')?.arguments).toEqual({ query: 'hello world', limit: 5 });
  });

  test('--arg for a tool the server does not list is a finding', async () => {
    const { report } = await inspectSafety(['--arg', 'nope.key=1']);
    expect(report.findings.some((f) => f.message === '--arg nope.key: no listed tool matches')).toBe(true);
  });

  test.each([
    ['search.query=hello', /not valid JSON/],
    ['search.query={', /not valid JSON/],
    ['searchquery=1', /TOOL\.KEY=JSON/],
    ['=1', /TOOL\.KEY=JSON/],
  ])('--arg %s is a usage error and starts nothing', async (arg, message) => {
    const record = recordFile();
    const result = await runInspect(['--arg', arg, ...fixture('inspect-safety.mjs')], { INSPECT_RECORD: record });
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    expect(result.stderr).toMatch(message);
    expect(recordedCalls(record)).toEqual([]);
  });
});

describe('terminal output', () => {
  test('shows tools, findings and a summary', async () => {
    const result = await runInspect(fixture('inspect-safety.mjs'));
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^Server +safety-fixture 1\.0\.0/m);
    expect(result.stdout).toMatch(/send_email +destructive +skipped +no annotations: destructive by spec default/);
    expect(result.stdout).toMatch(/^Summary$/m);
    expect(result.stdout).toMatch(/tools +5 \(2 read-only-unchecked, 1 mutating, 2 destructive\)/);
    expect(result.stdout).toMatch(/executed +2, skipped 3/);
  });
});
