/**
 * The MCP clients' own command-line tools, installed from the npm registry at pinned versions into a cache
 * folder (one per package@version, kept across runs), and run with a throwaway HOME: tests read back what a
 * client itself wrote and reads. An install that fails fails the test; nothing is skipped.
 */
import { execFile, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { processAlive, ROOT } from './airlock.js';

export interface ClientCli {
  pkg: string;
  version: string;
  /** The command the package installs under node_modules/.bin. */
  bin: string;
}

/** Each client's CLI at the version the tests were written against. */
export const CLIENT_CLIS = {
  'claude-code': { pkg: '@anthropic-ai/claude-code', version: '2.1.332', bin: 'claude' },
  'gemini-cli': { pkg: '@google/gemini-cli', version: '0.61.0', bin: 'gemini' },
  'qwen-code': { pkg: '@qwen-code/qwen-code', version: '0.24.4', bin: 'qwen' },
  codex: { pkg: '@openai/codex', version: '0.171.0', bin: 'codex' },
  cline: { pkg: 'cline', version: '3.0.65', bin: 'cline' },
  opencode: { pkg: 'opencode-ai', version: '1.18.33', bin: 'opencode' },
  inspector: { pkg: '@modelcontextprotocol/inspector', version: '2.12.0', bin: 'mcp-inspector' },
} as const satisfies Record<string, ClientCli>;

/** Outside node_modules: npm takes anything written there as a change to the installed tree. */
const CACHE = process.env.AIRLOCK_CLIENT_CLI_CACHE ?? join(ROOT, '.cache', 'client-cli');

export interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function run(command: string, args: string[], opts: { cwd?: string; env?: NodeJS.ProcessEnv; timeout?: number }): Promise<Run> {
  return new Promise((resolve) => {
    const child = execFile(command, args, { cwd: opts.cwd, env: opts.env, timeout: opts.timeout ?? 120_000, maxBuffer: 16 * 1024 * 1024 }, (err, stdout, stderr) => {
      const code = err ? (typeof (err as { code?: unknown }).code === 'number' ? ((err as { code: number }).code) : 1) : 0;
      resolve({ code, stdout, stderr });
    });
    // some CLIs wait for input when stdin is open
    child.stdin?.end();
  });
}

/** How often a file waiting for another's install looks again, and how long it waits at most. */
const LOCK_POLL_MS = 500;
const LOCK_WAIT_MS = 600_000;
/** A lock folder still without its owner's pid after this long was left by a run that died making it. */
const LOCK_UNNAMED_MS = 10_000;

/**
 * The path of the CLI's command, installing it first when this package@version is not in the cache. The
 * install goes to a temp folder renamed into place once complete, so a half install is never reused. One install
 * of a package runs at a time, across test files too (a lock folder beside it, with its owner's pid): a second
 * asker waits for it rather than downloading the same hundreds of megabytes beside it.
 */
export async function installClientCli(cli: ClientCli): Promise<{ bin: string; installMs: number }> {
  const dir = join(CACHE, `${cli.pkg.replace(/[@/]/g, '_')}@${cli.version}`);
  const bin = join(dir, 'node_modules', '.bin', cli.bin);
  const installed = () => existsSync(join(dir, '.complete')) && existsSync(bin);
  if (installed()) return { bin, installMs: 0 };
  mkdirSync(CACHE, { recursive: true });
  const lock = `${dir}.lock`;
  const waitedFrom = Date.now();
  while (!takeLock(lock)) {
    if (Date.now() - waitedFrom > LOCK_WAIT_MS) throw new Error(`waited ${LOCK_WAIT_MS / 1000} s for another install of ${cli.pkg}@${cli.version} (${lock})`);
    await new Promise((r) => setTimeout(r, LOCK_POLL_MS));
    if (installed()) return { bin, installMs: 0 };
  }
  try {
    // installed by the lock's last owner just before it let go
    if (installed()) return { bin, installMs: 0 };
    const tmp = mkdtempSync(join(CACHE, '.installing-'));
    const started = Date.now();
    const r = await run('npm', ['install', '--prefix', tmp, '--no-audit', '--no-fund', '--no-save', '--loglevel=error', `${cli.pkg}@${cli.version}`], { timeout: 600_000 });
    if (r.code !== 0) {
      rmSync(tmp, { recursive: true, force: true });
      throw new Error(`npm install ${cli.pkg}@${cli.version} failed (${r.code}): ${r.stderr.slice(-2000)}`);
    }
    writeFileSync(join(tmp, '.complete'), `${new Date().toISOString()}\n`);
    rmSync(dir, { recursive: true, force: true });
    renameSync(tmp, dir);
    if (!existsSync(bin)) throw new Error(`${cli.pkg}@${cli.version} installed no ${cli.bin} command`);
    return { bin, installMs: Date.now() - started };
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

/**
 * Start installing these CLIs now, at most `atOnce` at a time, and give each one's install to await where it is
 * used: an install is mostly a wait on the registry (one took 69 s of a 263 s file in CI), and a file that needs
 * several would otherwise wait for them one after another, each in its own test. A failed install fails the tests
 * that await it, not the file's import.
 */
export function installSoon(clis: readonly ClientCli[], atOnce = 3): Map<ClientCli, Promise<{ bin: string; installMs: number }>> {
  const waiting = [...clis];
  const started = new Map<ClientCli, (value: Promise<{ bin: string; installMs: number }>) => void>();
  const installs = new Map<ClientCli, Promise<{ bin: string; installMs: number }>>();
  for (const cli of clis) installs.set(cli, new Promise((resolve) => started.set(cli, resolve)));
  const next = (): void => {
    const cli = waiting.shift();
    if (!cli) return;
    const install = installClientCli(cli);
    started.get(cli)!(install);
    install.then(next, next);
  };
  for (let i = 0; i < atOnce; i++) next();
  // awaited by the tests; marked handled here so that one no test reached yet does not stop the run
  for (const install of installs.values()) install.catch(() => {});
  return installs;
}

/** Take the lock folder, or take over one whose owner has exited (a run killed mid-install). */
function takeLock(lock: string): boolean {
  try {
    mkdirSync(lock);
    writeFileSync(join(lock, 'pid'), String(process.pid));
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  let owner = NaN;
  try {
    owner = Number(readFileSync(join(lock, 'pid'), 'utf8'));
  } catch {
    // made a moment ago, its pid not written yet: wait, unless its maker died before it could write it
    try {
      if (Date.now() - statSync(lock).mtimeMs < LOCK_UNNAMED_MS) return false;
    } catch {
      return false;
    }
  }
  if (Number.isInteger(owner) && owner > 0 && processAlive(owner)) return false;
  rmSync(lock, { recursive: true, force: true });
  return false;
}

/**
 * An environment holding only what a client needs: this HOME, PATH, and the switches that keep the CLIs from
 * updating themselves or phoning home; none of the user's own config variables.
 */
export function clientEnv(home: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return {
    HOME: home,
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    TERM: 'dumb',
    NO_COLOR: '1',
    CI: '1',
    DISABLE_AUTOUPDATER: '1',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    NO_UPDATE_NOTIFIER: '1',
    OPENCODE_DISABLE_AUTOUPDATE: '1',
    GEMINI_CLI_NO_RELAUNCH: 'true',
    ...extra,
  };
}

/** Run an installed client CLI. */
export function runClient(bin: string, args: string[], opts: { cwd: string; env: NodeJS.ProcessEnv; timeout?: number }): Promise<Run> {
  return run(bin, args, opts);
}

/** The version the installed client reports, to name in a failure. */
export function clientVersion(bin: string, env: NodeJS.ProcessEnv): string {
  return spawnSync(bin, ['--version'], { env, encoding: 'utf8', timeout: 30_000 }).stdout.trim();
}
