/** Where the project folders the clients know are read from, and what is left out. */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, expect, test } from 'vitest';
import { knownProjects } from '../../../proxy-core/src/clients/projects.js';

const home = mkdtempSync(join(tmpdir(), 'al-known-'));
afterAll(() => rmSync(home, { recursive: true, force: true }));

function put(path: string, text: string): void {
  mkdirSync(join(path, '..'), { recursive: true });
  writeFileSync(path, text);
}

test("VS Code's and Cursor's recent workspaces, Qwen's trusted folders; remote and relative ones left out; a broken record said", async () => {
  const [code, cursor, qwen, cur] = ['code-proj', 'cursor-proj', 'qwen-proj', 'cur'].map((n) => join(home, n)) as [string, string, string, string];
  for (const d of [code, cursor, qwen, cur]) mkdirSync(d);
  const storage = join(home, '.config', 'Code', 'User', 'workspaceStorage');
  put(join(storage, 'a1', 'workspace.json'), JSON.stringify({ folder: pathToFileURL(code).href }));
  put(join(storage, 'a2', 'workspace.json'), JSON.stringify({ folder: 'vscode-remote://ssh-remote+box/home/x' }));
  put(join(storage, 'a3', 'workspace.json'), '{ not json');
  put(join(home, '.config', 'Cursor', 'User', 'workspaceStorage', 'b1', 'workspace.json'), JSON.stringify({ folder: pathToFileURL(cursor).href }));
  put(join(home, '.qwen', 'trustedFolders.json'), JSON.stringify({ [qwen]: 'TRUST_FOLDER', 'rel/dir': 'TRUST_FOLDER', [cur]: 'TRUST_PARENT' }));
  const r = await knownProjects({ env: { HOME: home }, platform: process.platform, projectDir: cur });
  expect(r.projects).toEqual([
    { dir: code, sources: ['VS Code'], exists: true },
    { dir: cursor, sources: ['Cursor'], exists: true },
    { dir: qwen, sources: ['Qwen Code'], exists: true },
  ]);
  expect(r.unreadable).toEqual([expect.stringContaining(join(storage, 'a3', 'workspace.json'))]);
});
