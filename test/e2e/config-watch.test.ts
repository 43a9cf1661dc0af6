/** The broker watches the clients' config files: new servers show up, and with auto-protect on, get wrapped. */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, expect, test } from 'vitest';
import { SETTINGS } from '../../proxy-core/src/protocol/settings.js';
import { cleanup, cli, cliJson, startDaemon, tempDir, waitFor } from '../helpers/airlock.js';

afterEach(cleanup);

type Ev = { type: string; server: string | null; detail: Record<string, unknown> };

test('a server added to a client config later is reported, and wrapped when auto-protect is on', async () => {
  const data = tempDir();
  const userHome = tempDir('al-home-');
  const cursorDir = join(userHome, '.cursor');
  mkdirSync(cursorDir);
  const config = join(cursorDir, 'mcp.json');
  writeFileSync(config, '{\n  "mcpServers": {}\n}\n');
  await startDaemon(data, [], { HOME: userHome, XDG_CONFIG_HOME: join(userHome, '.config') });
  await new Promise((r) => setTimeout(r, 500));

  writeFileSync(config, '{\n  "mcpServers": {\n    "notes": { "command": "node", "args": ["notes.js"] }\n  }\n}\n');
  await waitFor(async () => (await cliJson<Ev[]>(data, ['history', '--events'])).some((e) => e.type === 'server-added' && e.server === 'notes'), 8000, 'server-added');
  const added = (await cliJson<Ev[]>(data, ['history', '--events'])).find((e) => e.type === 'server-added')!;
  expect(added.detail).toMatchObject({ client: 'cursor', protected: false });
  expect(readFileSync(config, 'utf8')).not.toContain('wrap');

  expect((await cli(data, ['settings', 'auto-protect', 'on'])).code).toBe(0);
  // every setting at its default, but the one just changed
  const defaults = Object.fromEntries(Object.entries(SETTINGS).map(([key, spec]) => [key, spec.fallback]));
  expect(await cliJson<Record<string, string>>(data, ['settings'])).toEqual({ ...defaults, 'auto-protect': 'on' });
  writeFileSync(config, '{\n  "mcpServers": {\n    "notes": { "command": "node", "args": ["notes.js"] },\n    "mail": { "command": "node", "args": ["mail.js"] }\n  }\n}\n');
  await waitFor(async () => (await cliJson<Ev[]>(data, ['history', '--events'])).some((e) => e.type === 'server-protected' && e.server === 'mail'), 8000, 'server-protected');
  const text = readFileSync(config, 'utf8');
  const parsed = JSON.parse(text) as { mcpServers: Record<string, { command: string; args: string[] }> };
  expect(parsed.mcpServers.mail!.args).toEqual(expect.arrayContaining(['wrap', '--name', 'mail', '--client', 'cursor', 'node', 'mail.js']));
  // the one that was there before auto-protect was turned on is left as the user has it
  expect(parsed.mcpServers.notes!.args).toEqual(['notes.js']);

  const bad = await cli(data, ['settings', 'estop', 'off']);
  expect(bad.code).toBe(2);
});
