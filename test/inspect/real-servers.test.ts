// End to end against the reference servers, relayed through a tap that records every tools/call it
// forwards: under the default policy nothing that declares itself mutating may run.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, test } from 'vitest';
import { cleanup, tempDir } from '../helpers/airlock.js';
import { calledTools, ensureBuilt, FIXTURES, parseReport, recordFile, ROOT, runInspect, type JsonReport } from './run-cli.js';

// temp folders (tempDir, recordFile) go after each test
afterEach(cleanup);

beforeAll(ensureBuilt, 120_000);

const tap = (script: string, ...args: string[]) => ['--', process.execPath, join(FIXTURES, 'inspect-tap.mjs'), process.execPath, join(ROOT, 'node_modules/@modelcontextprotocol', script), ...args];

function declaredReadOnly(report: JsonReport): string[] {
  return report.tools.filter((t) => (t.annotations as { readOnlyHint?: unknown } | undefined)?.readOnlyHint === true).map((t) => t.name);
}

describe('@modelcontextprotocol/server-everything', () => {
  test('the default policy runs only tools that declare readOnlyHint: true', async () => {
    const record = recordFile();
    const result = await runInspect(
      // The long-running demo tool takes 10 s by default; a real argument keeps the test quick.
      ['--json', '--arg', 'trigger-long-running-operation.duration=0.1', ...tap('server-everything/dist/index.js', 'stdio')],
      { INSPECT_RECORD: record },
    );
    const report = parseReport(result);
    expect(report.server.name).toBe('mcp-servers/everything');
    const called = calledTools(record);
    expect(called.length).toBeGreaterThan(0);
    expect(called.every((t) => declaredReadOnly(report).includes(t))).toBe(true);
    for (const mutating of ['toggle-simulated-logging', 'toggle-subscriber-updates', 'gzip-file-as-resource', 'simulate-research-query']) {
      expect(called).not.toContain(mutating);
      expect(report.skipped.find((s) => s.tool === mutating)?.reason).toMatch(/--allow-mutations/);
    }
    const structured = report.executed.find((e) => e.tool === 'get-structured-content');
    expect(structured?.checks.find((c) => c.name === 'output-schema')?.ok).toBe(true);
    expect(report.resources.length).toBeGreaterThan(0);
    expect(report.resources.every((r) => r.ok)).toBe(true);
    expect(report.prompts.some((p) => p.ok)).toBe(true);
  });
});

describe('@modelcontextprotocol/server-memory', () => {
  const run = async (flags: string[]) => {
    const record = recordFile();
    const memoryFile = join(tempDir('airlock-memory-'), 'memory.jsonl');
    const result = await runInspect(['--json', ...flags, ...tap('server-memory/dist/index.js')], { INSPECT_RECORD: record, MEMORY_FILE_PATH: memoryFile });
    return { report: parseReport(result), called: calledTools(record), wrote: existsSync(memoryFile) };
  };

  test('the default policy reads the graph and writes nothing', async () => {
    const { report, called, wrote } = await run([]);
    expect(called.sort()).toEqual(['open_nodes', 'read_graph', 'search_nodes']);
    expect(wrote).toBe(false);
    expect(report.skipped.map((s) => s.tool).sort()).toEqual(
      ['add_observations', 'create_entities', 'create_relations', 'delete_entities', 'delete_observations', 'delete_relations'],
    );
  });

  test('--allow-mutations does write (so the check above would see a write)', async () => {
    const { called, wrote } = await run(['--allow-mutations', '--only', 'create_entities']);
    expect(called).toEqual(['create_entities']);
    expect(wrote).toBe(true);
  });
});
