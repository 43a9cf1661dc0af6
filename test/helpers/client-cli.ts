/**
 * The MCP clients' own command-line tools, installed from the npm registry at pinned versions into a cache
 * folder (one per package@version, kept across runs), and run with a throwaway HOME: tests read back what a
 * client itself wrote and reads. An install that fails fails the test; nothing is skipped.
 */
import { execFile, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './airlock.js';

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

/**
 * The path of the CLI's command, installing it first when this package@version is not in the cache. The
 * install goes to a temp folder renamed into place once complete, so a half install is never reused and two
 * test files installing at once do not step on each other.
 */
export async function installClientCli(cli: ClientCli): Promise<{ bin: string; installMs: number }> {
  const dir = join(CACHE, `${cli.pkg.replace(/[@/]/g, '_')}@${cli.version}`);
  const bin = join(dir, 'node_modules', '.bin', cli.bin);
  if (existsSync(join(dir, '.complete')) && existsSync(bin)) return { bin, installMs: 0 };
  mkdirSync(CACHE, { recursive: true });
  const tmp = mkdtempSync(join(CACHE, '.installing-'));
  const started = Date.now();
  const r = await run('npm', ['install', '--prefix', tmp, '--no-audit', '--no-fund', '--no-save', '--loglevel=error', `${cli.pkg}@${cli.version}`], { timeout: 600_000 });
  if (r.code !== 0) {
    rmSync(tmp, { recursive: true, force: true });
    throw new Error(`npm install ${cli.pkg}@${cli.version} failed (${r.code}): ${r.stderr.slice(-2000)}`);
  }
  writeFileSync(join(tmp, '.complete'), `${new Date().toISOString()}\n`);
  try {
    renameSync(tmp, dir);
  } catch (err) {
    // another run finished first: use its install
    rmSync(tmp, { recursive: true, force: true });
    if (!existsSync(join(dir, '.complete'))) throw err;
  }
  if (!existsSync(bin)) throw new Error(`${cli.pkg}@${cli.version} installed no ${cli.bin} command`);
  return { bin, installMs: Date.now() - started };
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
