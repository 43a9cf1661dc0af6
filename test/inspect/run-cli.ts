/** Helpers for driving the built `airlock inspect` as a child process, against fixture servers. */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, rmdirSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { tempDir } from '../helpers/airlock.js';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
export const FIXTURES = join(ROOT, 'test/fixtures/servers');

function newestMtime(dir: string): number {
  let newest = 0;
  for (const name of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, name.name);
    newest = Math.max(newest, name.isDirectory() ? newestMtime(path) : statSync(path).mtimeMs);
  }
  return newest;
}

function stale(): boolean {
  const built = join(ROOT, 'proxy-core/dist/cli/commands/inspect.js');
  if (!existsSync(built)) return true;
  const src = Math.max(newestMtime(join(ROOT, 'proxy-core/src/inspect')), statSync(join(ROOT, 'proxy-core/src/cli/commands/inspect.ts')).mtimeMs);
  return src > statSync(built).mtimeMs;
}

/** Compile the CLI when the inspect sources are newer than the build (one test file at a time builds). */
export async function ensureBuilt(): Promise<void> {
  const lock = join(tmpdir(), 'airlock-inspect-test-build.lock');
  for (let waited = 0; waited < 120_000; waited += 200) {
    try {
      mkdirSync(lock);
    } catch {
      // A lock left by a run that was killed mid-build is stale after a minute.
      try {
        if (Date.now() - statSync(lock).mtimeMs > 60_000) rmdirSync(lock);
      } catch {
        // Released meanwhile.
      }
      await new Promise((r) => setTimeout(r, 200));
      continue;
    }
    try {
      // Other modules may not type-check while they are being written; tsc emits regardless.
      if (stale()) spawnSync(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.json'], { cwd: ROOT, stdio: 'ignore' });
    } finally {
      rmdirSync(lock);
    }
    if (!existsSync(join(ROOT, 'proxy-core/dist/cli/commands/inspect.js'))) throw new Error('the CLI did not build');
    return;
  }
  throw new Error('timed out waiting for another test file to build the CLI');
}

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
  ms: number;
}

/** Run `airlock inspect ARGS`; never hangs past `timeoutMs`. */
export function runInspect(args: string[], env: Record<string, string> = {}, timeoutMs = 60_000): Promise<CliResult> {
  const started = Date.now();
  return new Promise((resolvePromise) => {
    const child = spawn(process.execPath, [join(ROOT, 'bin/airlock.js'), 'inspect', ...args], {
      cwd: ROOT,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolvePromise({ code, stdout, stderr, ms: Date.now() - started });
    });
  });
}

/** A fresh file path for a fixture to record its tools/call into. */
export function recordFile(): string {
  // removed at the test file's cleanup() (helpers/airlock.ts)
  return join(tempDir('airlock-inspect-'), 'calls.jsonl');
}

/** The tools/call requests a fixture recorded, in order. */
export function recordedCalls(path: string): Array<{ tool: string; arguments: Record<string, unknown> }> {
  if (!existsSync(path)) return [];
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as { tool: string; arguments: Record<string, unknown> });
}

/** The names of the tools a fixture executed, each once. */
export function calledTools(path: string): string[] {
  return [...new Set(recordedCalls(path).map((c) => c.tool))];
}

/** The `--json` report. */
export interface JsonReport {
  server: { name: string; version: string; protocolVersion: string };
  policy: string;
  tools: Array<{ name: string; class: string; reasons: string[]; annotations?: unknown }>;
  findings: Array<{ severity: string; tool?: string; message: string }>;
  executed: Array<{ tool: string; latencyMsP50: number | null; runs: number; arguments: Record<string, unknown>; checks: Array<{ name: string; ok: boolean; detail: string }> }>;
  skipped: Array<{ tool: string; reason: string }>;
  resources: Array<{ uri: string; ok: boolean; bytes?: number; error?: string }>;
  prompts: Array<{ name: string; ok: boolean; error?: string }>;
  summary: { toolsByClass: Record<string, number>; findingsBySeverity: Record<string, number>; executed: number; skipped: number };
}

export function parseReport(result: CliResult): JsonReport {
  if (result.code !== 0) throw new Error(`inspect exited ${result.code}: ${result.stderr}`);
  return JSON.parse(result.stdout) as JsonReport;
}

export function fixture(name: string): string[] {
  return ['--', process.execPath, join(FIXTURES, name)];
}
