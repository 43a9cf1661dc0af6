/**
 * Rules that treat irreversible calls more strictly, against real servers: with "allow everything" and "ask
 * when it cannot be undone", a filesystem write (snapshotted) runs unasked, a memory-server create_entities
 * without an inverse asks and runs only when approved, and runs unasked once an inverse is declared. A write
 * whose file is over the snapshot cap is refused, because the rule's judgement ("undoable") would be false.
 * Ground truth: the disk and the memory server's file.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import type { HistoryItem } from '../../proxy-core/src/protocol/api.js';
import { cleanup, cli, cliJson, connectWrapped, decisionOf, FILESYSTEM, MEMORY, startDaemon, tempDir, waitForSessions, waitForTicket } from '../helpers/airlock.js';
import { airlockWithFilesystem } from '../helpers/e2e.js';

afterEach(cleanup);

/** The journal's calls of a tool, newest first. */
const history = (home: string, tool: string) => cliJson<HistoryItem[]>(home, ['history', '--tool', tool]);

async function strictOnIrreversible(home: string, server: string): Promise<void> {
  await startDaemon(home);
  expect((await cli(home, ['rules', 'add', 'allow', '--server', server, '--tool', '*'])).code).toBe(0);
  const added = await cli(home, ['rules', 'add', 'ask', '--server', server, '--tool', '*', '--irreversible']);
  expect(added.code).toBe(0);
  expect(added.stdout).toContain('when it cannot be undone');
}

describe('ask for what cannot be undone', () => {
  test('filesystem: a snapshotted write runs unasked; one over the snapshot cap is refused and the file is untouched', async () => {
    const home = tempDir();
    const root = join(home, 'files');
    mkdirSync(root);
    await strictOnIrreversible(home, 'filesystem');
    expect((await cli(home, ['settings', 'snapshot-file-mb', '1'])).code).toBe(0);
    const w = await connectWrapped({ home, server: 'filesystem', command: process.execPath, args: [FILESYSTEM, root] });
    await waitForSessions(home, 1);

    const small = join(root, 'small.md');
    writeFileSync(small, 'before');
    const ok = await w.client.callTool({ name: 'write_file', arguments: { path: small, content: 'after' } });
    expect(ok.isError).toBeFalsy();
    expect(readFileSync(small, 'utf8')).toBe('after');

    const big = join(root, 'big.bin');
    const bytes = Buffer.alloc(1024 * 1024 + 1, 7);
    writeFileSync(big, bytes);
    const refused = await w.client.callTool({ name: 'write_file', arguments: { path: big, content: 'replaced' } });
    expect(refused.isError).toBe(true);
    expect(JSON.stringify(refused.content)).toMatch(/could not be undone after all .*decides by whether a call can be undone/);
    expect(readFileSync(big).equals(bytes)).toBe(true);
    expect((await history(home, 'write_file')).map((h) => [h.decision, h.decidedBy, h.undo?.kind ?? null])).toEqual([
      ['deny', 'error', null],
      ['allow', 'rule', 'snapshot'],
    ]);
  });

  test('memory: create_entities asks while it has no inverse, and runs unasked once one is declared', async () => {
    const home = tempDir();
    const memoryFile = join(home, 'memory.jsonl');
    await strictOnIrreversible(home, 'memory');
    const w = await connectWrapped({ home, server: 'memory', command: process.execPath, args: [MEMORY], env: { MEMORY_FILE_PATH: memoryFile } });
    await waitForSessions(home, 1);

    const entity = (name: string) => ({ entities: [{ name, entityType: 'thing', observations: [] }] });
    const denied = w.client.callTool({ name: 'create_entities', arguments: entity('Denied') });
    const ticket = await waitForTicket(home, 'create_entities');
    expect((ticket as unknown as { undoable: unknown }).undoable).toBeNull();
    expect(ticket.reasons.join(' ')).toMatch(/asks \(ask server=memory tool=\* when it cannot be undone\)/);
    await cli(home, ['deny', ticket.id]);
    expect(decisionOf(await denied)).toMatchObject({ decision: 'deny', decidedBy: 'user' });
    expect(existsSync(memoryFile) ? readFileSync(memoryFile, 'utf8') : '').not.toContain('Denied');

    expect((await cli(home, ['inverses', 'set', 'memory', 'create_entities=delete_entities:result:entityNames=entities.name'])).code).toBe(0);
    const ran = await w.client.callTool({ name: 'create_entities', arguments: entity('Undoable') });
    expect(ran.isError).toBeFalsy();
    expect(readFileSync(memoryFile, 'utf8')).toContain('Undoable');
    expect((await history(home, 'create_entities'))[0]).toMatchObject({ decision: 'allow', decidedBy: 'rule', undo: { kind: 'inverse' } });
    // read_graph claims to change nothing: unchecked, the claim is not believed and the call asks; once the
    // server's hints are trusted, there is nothing to undo and the rule on irreversible calls leaves it alone
    const read = w.client.callTool({ name: 'read_graph', arguments: {} });
    await cli(home, ['deny', (await waitForTicket(home, 'read_graph')).id]);
    expect(decisionOf(await read)).toMatchObject({ decision: 'deny', decidedBy: 'user' });
    expect((await cli(home, ['trust', 'memory', 'on'])).code).toBe(0);
    expect(JSON.stringify((await w.client.callTool({ name: 'read_graph', arguments: {} })).content)).toContain('Undoable');
  });

  test('an allow for only the calls that cannot be undone is refused with what to write instead; rules list shows the condition', async () => {
    const home = tempDir();
    await startDaemon(home);
    const r = await cli(home, ['rules', 'add', 'allow', '--server', '*', '--tool', '*', '--irreversible']);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/riskiest calls run without asking/);
    expect((await cli(home, ['rules', 'add', 'deny', '--server', '*', '--tool', '*', '--undoable', '--irreversible'])).stderr).toMatch(/exclude each other/);
    expect((await cli(home, ['rules', 'add', 'allow', '--server', 'fs', '--tool', 'write_file', '--undoable'])).code).toBe(0);
    expect(await cliJson<unknown[]>(home, ['rules'])).toMatchObject([{ action: 'allow', server: 'fs', tool: 'write_file', undoable: true }]);
    expect((await cli(home, ['rules'])).stdout).toMatch(/write_file .*it can be undone/);
  });

  test('approve --always --undoable from the CLI: pending offers it, and the rule it makes lets only undoable calls run', async () => {
    const home = tempDir();
    const { root, w } = await airlockWithFilesystem(home);
    const target = join(root, 'a.md');
    const call = w.client.callTool({ name: 'write_file', arguments: { path: target, content: 'one' } });
    const ticket = await waitForTicket(home, 'write_file');
    expect((await cli(home, ['pending'])).stdout).toContain(`calls Airlock can undo: airlock approve ${ticket.id} --always --undoable`);
    expect((await cli(home, ['approve', ticket.id, '--undoable'])).stderr).toMatch(/add --always/);
    const approved = await cli(home, ['approve', ticket.id, '--always', '--undoable']);
    expect(approved.stdout).toMatch(/always: an allow rule was added when it can be undone\)/);
    expect((await call).isError).toBeFalsy();
    expect(await cliJson<unknown[]>(home, ['rules'])).toMatchObject([{ action: 'allow', server: 'filesystem', tool: 'write_file', undoable: true }]);
    expect((await w.client.callTool({ name: 'write_file', arguments: { path: join(root, 'b.md'), content: 'two' } })).isError).toBeFalsy();
    expect(readFileSync(join(root, 'b.md'), 'utf8')).toBe('two');
  });
});
