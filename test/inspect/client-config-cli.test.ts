// End to end: `airlock inspect --client C --server NAME` starts the server as the client's config says.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeAll, expect, test } from 'vitest';
import { cleanup, tempDir } from '../helpers/airlock.js';
import { calledTools, ensureBuilt, FIXTURES, parseReport, recordFile, runInspect } from './run-cli.js';

// temp folders (tempDir, recordFile) go after each test
afterEach(cleanup);

beforeAll(ensureBuilt, 120_000);

function homeWithCursorConfig(servers: Record<string, unknown>): string {
  const home = tempDir('airlock-inspect-home-');
  mkdirSync(join(home, '.cursor'));
  writeFileSync(join(home, '.cursor', 'mcp.json'), JSON.stringify({ mcpServers: servers }, null, 2));
  return home;
}

test('runs the configured command with its env, under the default policy', async () => {
  const record = recordFile();
  const home = homeWithCursorConfig({
    notes: { command: process.execPath, args: [join(FIXTURES, 'inspect-safety.mjs')], env: { INSPECT_RECORD: record, INSPECT_PANIC: '1' } },
  });
  const report = parseReport(await runInspect(['--json', '--client', 'cursor', '--server', 'notes'], { HOME: home, USERPROFILE: home }));
  expect(report.server.name).toBe('safety-fixture');
  expect(calledTools(record)).toEqual(['read_status', 'search']);
});

test.each([
  [['--client', 'cursor', '--server', 'missing'], 1, /no server "missing"/],
  [['--client', 'no-such-client', '--server', 'notes'], 2, /unknown client "no-such-client"/],
])('%j fails with one line on stderr', async (args, code, message) => {
  const home = homeWithCursorConfig({ notes: { command: 'true' } });
  const result = await runInspect(args, { HOME: home, USERPROFILE: home });
  expect(result.code).toBe(code);
  expect(result.stderr.trim().split('\n')).toHaveLength(1);
  expect(result.stderr).toMatch(message);
});
