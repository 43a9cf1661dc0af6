/**
 * Real MCP clients' CLIs, installed from npm at pinned versions for tests that check what a client itself shows
 * (`claude mcp list`, `gemini mcp list`, `qwen mcp list`). Each package@version is installed once into a cache
 * folder keyed by its version and reused after. An install that fails fails the test: a client that could not
 * be installed is never a skipped check.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface ClientPackage {
  pkg: string;
  version: string;
  bin: string;
}

export const CLIENTS = {
  claude: { pkg: '@anthropic-ai/claude-code', version: '2.1.332', bin: 'claude' },
  gemini: { pkg: '@google/gemini-cli', version: '0.61.0', bin: 'gemini' },
  qwen: { pkg: '@qwen-code/qwen-code', version: '0.24.4', bin: 'qwen' },
} as const satisfies Record<string, ClientPackage>;

/** The MCP Inspector, whose `--cli` makes one request and exits (a one-shot client). */
export const INSPECTOR = { pkg: '@modelcontextprotocol/inspector', version: '2.12.0', bin: 'mcp-inspector' } as const satisfies ClientPackage;

/** Where installed clients are kept between runs (AIRLOCK_TEST_CLIENTS to choose another place). */
export function cacheDir(): string {
  return process.env.AIRLOCK_TEST_CLIENTS ?? join(tmpdir(), 'airlock-test-clients');
}

/** The client's executable, installed first when this version is not in the cache yet. Throws when the install fails. */
export async function installClient(c: ClientPackage): Promise<string> {
  const dir = join(cacheDir(), `${c.pkg.replace(/[@/]/g, '_')}@${c.version}`);
  const bin = join(dir, 'node_modules', '.bin', c.bin);
  if (existsSync(bin)) return bin;
  mkdirSync(cacheDir(), { recursive: true });
  // installed aside and moved in whole: a run stopped halfway, or another test file installing the same
  // client at once, never leaves a half-installed client to be reused
  const staging = `${dir}.${process.pid}.${Date.now()}`;
  const out = await run('npm', ['install', '--prefix', staging, '--no-audit', '--no-fund', '--loglevel=error', `${c.pkg}@${c.version}`]);
  if (out.code !== 0 || !existsSync(join(staging, 'node_modules', '.bin', c.bin))) {
    rmSync(staging, { recursive: true, force: true });
    throw new Error(`could not install ${c.pkg}@${c.version} (npm exited ${out.code}): ${out.stderr.slice(-2000)}`);
  }
  try {
    renameSync(staging, dir);
  } catch (err) {
    // another installer got there first: use its copy
    rmSync(staging, { recursive: true, force: true });
    if (!existsSync(bin)) throw err;
  }
  return bin;
}

function run(command: string, args: string[]): Promise<{ code: number; stderr: string }> {
  return new Promise((resolve, reject) => {
    const p = spawn(command, args, { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    p.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    p.once('error', reject);
    p.once('close', (code) => resolve({ code: code ?? 1, stderr }));
  });
}

/** The version the installed client reports, to name in a failure. */
export function clientVersion(bin: string, env: NodeJS.ProcessEnv): string {
  return spawnSync(bin, ['--version'], { env, encoding: 'utf8', timeout: 30_000 }).stdout.trim();
}
