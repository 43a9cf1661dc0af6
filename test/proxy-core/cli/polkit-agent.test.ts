import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { ROOT } from '../../helpers/airlock.js';
import { polkitUnavailable, startPolkit, type Polkit } from '../../helpers/polkit.js';

const MODULE = join(ROOT, 'proxy-core', 'dist', 'cli', 'polkit-agent.js');
const dir = mkdtempSync(join(tmpdir(), 'airlock-agent-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Start the agent in a child, report what it got and whether pkttyagent is gone after stop(). */
const probe = (pkttyagent?: string) => {
  const file = join(dir, `probe-${Math.random().toString(36).slice(2)}.mjs`);
  writeFileSync(
    file,
    `import { execFileSync } from 'node:child_process';
const { startTextAgent } = await import(${JSON.stringify(MODULE)});
const agent = await startTextAgent(${pkttyagent ? JSON.stringify({ pkttyagent }) : ''});
const agents = () => { try { return execFileSync('pgrep', ['-P', String(process.pid), 'pkttyagent'], { encoding: 'utf8' }).trim(); } catch { return ''; } };
const running = agents();
agent?.stop();
await new Promise((r) => setTimeout(r, 0));
let after = agents();
for (let i = 0; after && i < 200; i++) { await new Promise((r) => setTimeout(r, 10)); after = agents(); }
process.stderr.write('RESULT ' + JSON.stringify({ agent: agent !== null, running: running !== '', after: after !== '' }) + '\\n');
`,
  );
  return file;
};

function run(cmd: string, args: string[]): Promise<{ agent: boolean; running: boolean; after: boolean }> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString('utf8')));
    child.stderr.on('data', (d: Buffer) => (out += d.toString('utf8')));
    child.on('close', () => {
      const m = /RESULT (\{.*\})/.exec(out);
      if (m) resolve(JSON.parse(m[1]!));
      else reject(new Error(`no result: ${out}`));
    });
  });
}

/** script(1) runs its command on a new pseudo-terminal: stdin and stderr are terminals there. */
const inTerminal = (file: string) => run('script', ['-qec', `${process.execPath} ${file}`, '/dev/null']);

test('no terminal (stdin from /dev/null, as an agent’s shell): no text agent', async () => {
  expect(await run(process.execPath, [probe()])).toEqual({ agent: false, running: false, after: false });
});

test('a terminal but no pkttyagent: null, nothing left running', async () => {
  expect(await inTerminal(probe(join(dir, 'no-such-pkttyagent')))).toEqual({ agent: false, running: false, after: false });
});

const unavailable = polkitUnavailable();

describe.skipIf(unavailable !== null)(`with a real polkitd${unavailable ? ` (skipped: ${unavailable})` : ''}`, () => {
  let polkit: Polkit;
  beforeAll(async () => {
    polkit = await startPolkit();
  }, 30_000);
  afterAll(() => polkit?.stop());

  test('in a terminal: polkit registers pkttyagent for this process, and stop() ends it', async () => {
    expect(await inTerminal(probe())).toEqual({ agent: true, running: true, after: false });
  });
});
