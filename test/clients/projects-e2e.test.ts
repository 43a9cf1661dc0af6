/**
 * `protect CLIENT --all` reaches every project the clients know, not only the current folder: Claude Code's
 * `projects` map (local-scope servers and each folder's .mcp.json) and Gemini CLI's trusted folders. `airlock
 * clients` lists them; a folder that is gone is said to be left. Through the real CLI, as a user runs it.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, test } from 'vitest';
import { CLI } from '../helpers/airlock.js';

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

function airlock(home: string, cwd: string, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const env = { PATH: process.env.PATH ?? '', HOME: home };
  return new Promise((resolve) => {
    execFile(process.execPath, [CLI, ...args], { env, cwd, timeout: 60_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

test('protect --all covers the projects Claude Code and Gemini CLI recorded, says what it left, and unprotect --all undoes it', async () => {
  const home = mkdtempSync(join(tmpdir(), 'al-projects-'));
  dirs.push(home);
  const [a, b, here, gone] = ['a', 'b', 'here', 'gone'].map((n) => join(home, n)) as [string, string, string, string];
  for (const d of [a, b, here]) mkdirSync(d);
  const claude = JSON.stringify({ projects: { [a]: { mcpServers: { loc: { type: 'stdio', command: 'node', args: ['/l.js'] } } }, [b]: {}, [gone]: {} } }, null, 2);
  writeFileSync(join(home, '.claude.json'), claude);
  const team = '{"mcpServers": {"team": {"command": "node", "args": ["/t.js"]}}}';
  writeFileSync(join(b, '.mcp.json'), team);
  mkdirSync(join(home, '.gemini'));
  writeFileSync(join(home, '.gemini', 'trustedFolders.json'), JSON.stringify({ [b]: 'TRUST_FOLDER', [a]: 'DO_NOT_TRUST' }));
  mkdirSync(join(b, '.gemini'));
  const gemini = '{"mcpServers": {"g": {"command": "x"}}}';
  writeFileSync(join(b, '.gemini', 'settings.json'), gemini);

  const list = await airlock(home, here, ['clients']);
  expect(list.code, list.stderr).toBe(0);
  expect(list.stdout).toContain(`${a} (Claude Code)`);
  expect(list.stdout).toContain(`${b} (Claude Code, Gemini CLI)`);
  expect(list.stdout).toMatch(new RegExp(`Gemini CLI: ${b}/\\.gemini/settings\\.json \\[project\\]: g not protected`));
  expect(list.stdout).toContain(`${gone} (Claude Code): folder gone`);

  const p = await airlock(home, here, ['protect', 'claude-code', '--all']);
  expect(p.code, p.stderr).toBe(0);
  expect(p.stdout).toMatch(/^protected\s+loc\s+\(local: /m);
  expect(p.stdout).toMatch(new RegExp(`^protected\\s+team\\s+\\(project: ${b}/\\.mcp\\.json\\)`, 'm'));
  expect(p.stdout).toContain(`left        ${gone}: folder gone`);
  expect(p.stderr).toContain(`--user-scope team --project "${b}"`);
  expect(readFileSync(join(b, '.mcp.json'), 'utf8')).toContain('"wrap"');

  // Gemini has no config in this folder nor a user one: the known projects are still reached
  const g = await airlock(home, here, ['protect', 'gemini-cli', '--all']);
  expect(g.code, g.stderr).toBe(0);
  expect(g.stdout).toMatch(/^protected\s+g\s/m);

  for (const client of ['claude-code', 'gemini-cli']) expect((await airlock(home, here, ['unprotect', client, '--all'])).code).toBe(0);
  expect(readFileSync(join(b, '.mcp.json'), 'utf8')).toBe(team);
  expect(readFileSync(join(b, '.gemini', 'settings.json'), 'utf8')).toBe(gemini);
  expect(readFileSync(join(home, '.claude.json'), 'utf8')).toBe(claude);
}, 120_000);
