/** Real servers from npm behind airlock wrap; ground truth is the disk and the server's own state. */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import { cleanup, cli, connectWrapped, decisionOf, FILESYSTEM, MEMORY, startDaemon, tempDir, textOf, waitForTicket } from '../helpers/airlock.js';

afterEach(cleanup);

describe('@modelcontextprotocol/server-filesystem', () => {
  test('write_file waits for a yes and the file appears only after it; a denied write never touches the disk', async () => {
    const home = tempDir();
    const root = join(home, 'files');
    mkdirSync(root);
    writeFileSync(join(root, 'readme.txt'), 'hello from disk');
    await startDaemon(home);
    const w = await connectWrapped({ home, server: 'filesystem', command: process.execPath, args: [FILESYSTEM, root] });

    const tools = (await w.client.listTools()).tools;
    const write = tools.find((t) => t.name === 'write_file')!;
    expect(write.annotations?.readOnlyHint).toBe(false);

    const target = join(root, 'approved.txt');
    const call = w.client.callTool({ name: 'write_file', arguments: { path: target, content: 'written after a yes' } });
    const ticket = await waitForTicket(home, 'write_file');
    expect(ticket.server).toBe('filesystem');
    expect(existsSync(target)).toBe(false);
    await cli(home, ['approve', ticket.id]);
    expect((await call).isError).toBeFalsy();
    expect(readFileSync(target, 'utf8')).toBe('written after a yes');

    const refused = join(root, 'refused.txt');
    const denied = w.client.callTool({ name: 'write_file', arguments: { path: refused, content: 'never' } });
    await cli(home, ['deny', (await waitForTicket(home, 'write_file')).id]);
    expect(decisionOf(await denied)).toMatchObject({ decidedBy: 'user' });
    expect(existsSync(refused)).toBe(false);
  });

  test('trusting its read-only hints lets reads through while writes still ask', async () => {
    const home = tempDir();
    const root = join(home, 'files');
    mkdirSync(root);
    writeFileSync(join(root, 'readme.txt'), 'hello from disk');
    await startDaemon(home);
    const w = await connectWrapped({ home, server: 'filesystem', trust: true, command: process.execPath, args: [FILESYSTEM, root] });
    const read = await w.client.callTool({ name: 'read_text_file', arguments: { path: join(root, 'readme.txt') } });
    expect(textOf(read)).toContain('hello from disk');
    const move = w.client.callTool({ name: 'move_file', arguments: { source: join(root, 'readme.txt'), destination: join(root, 'moved.txt') } });
    const ticket = await waitForTicket(home, 'move_file');
    await cli(home, ['deny', ticket.id]);
    await move;
    expect(existsSync(join(root, 'readme.txt'))).toBe(true);
    expect(existsSync(join(root, 'moved.txt'))).toBe(false);
  });
});

describe('@modelcontextprotocol/server-memory', () => {
  test('a denied create_entities leaves the knowledge graph empty; an approved one is stored', async () => {
    const home = tempDir();
    const memoryFile = join(home, 'memory.jsonl');
    await startDaemon(home);
    const w = await connectWrapped({ home, server: 'memory', command: process.execPath, args: [MEMORY], env: { MEMORY_FILE_PATH: memoryFile } });
    const entities = [{ name: 'Airlock', entityType: 'project', observations: ['gates tool calls'] }];

    const denied = w.client.callTool({ name: 'create_entities', arguments: { entities } });
    await cli(home, ['deny', (await waitForTicket(home, 'create_entities')).id]);
    expect((await denied).isError).toBe(true);
    expect(existsSync(memoryFile) ? readFileSync(memoryFile, 'utf8') : '').not.toContain('Airlock');

    const approved = w.client.callTool({ name: 'create_entities', arguments: { entities } });
    await cli(home, ['approve', (await waitForTicket(home, 'create_entities')).id]);
    expect((await approved).isError).toBeFalsy();
    expect(readFileSync(memoryFile, 'utf8')).toContain('gates tool calls');
  });
});
