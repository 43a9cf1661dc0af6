/**
 * A held call with a huge argument: the broker keeps and shows a bounded part of it, marked as cut, plus the
 * hash of the whole; its memory and its database stay small; approved, the server still gets every byte.
 */
import { createHash } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, expect, test } from 'vitest';
import { canonicalJson } from '../../proxy-core/src/jsonrpc/canonical.js';
import { cleanup, cli, cliJson, connectWrapped, executedCalls, fixture, startDaemon, tempDir, waitForSessions, waitForTicket } from '../helpers/airlock.js';

afterEach(cleanup);

function rssMb(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Number(m![1]) / 1024;
}

function dbBytes(home: string): number {
  let total = 0;
  for (const f of ['airlock.db', 'airlock.db-wal']) {
    try {
      total += statSync(join(home, f)).size;
    } catch {
      // no WAL yet
    }
  }
  return total;
}

test('a 30 MB argument on a held call: a cut, marked ticket with the whole hash; small broker; intact when approved', async () => {
  const home = tempDir();
  const daemon = await startDaemon(home);
  const fx = fixture(home);
  const w = await connectWrapped({ home, command: fx.command, args: fx.args, env: fx.env, maxBufferSize: 100 * 2 ** 20 });
  await waitForSessions(home, 1);
  const rssBefore = rssMb(daemon.proc.pid!);
  const dbBefore = dbBytes(home);

  const args = { text: 'x'.repeat(30 * 2 ** 20) };
  const call = w.client.callTool({ name: 'write_note', arguments: args }, undefined, { timeout: 60_000 });
  const ticket = (await waitForTicket(home, 'write_note', 20_000)) as unknown as {
    id: string;
    arguments: unknown;
    argsTruncated: boolean;
    argsBytes: number;
    argsSha256: string;
  };
  expect(ticket.argsTruncated).toBe(true);
  expect(typeof ticket.arguments).toBe('string');
  expect((ticket.arguments as string).length).toBeLessThanOrEqual(64 * 1024);
  expect(ticket.argsBytes).toBe(JSON.stringify(args).length);
  expect(ticket.argsSha256).toBe(createHash('sha256').update(canonicalJson(args)).digest('hex'));
  const text = await cli(home, ['pending']);
  expect(text.stdout).toMatch(/cut: \d+ chars in all/);

  const rssGrowth = rssMb(daemon.proc.pid!) - rssBefore;
  expect(rssGrowth).toBeLessThan(30);
  expect(dbBytes(home) - dbBefore).toBeLessThan(2 * 2 ** 20);

  await cli(home, ['approve', ticket.id]);
  const result = await call;
  expect(result.isError).toBeFalsy();
  const ran = executedCalls(fx.log, 'write_note');
  expect(ran).toHaveLength(1);
  expect((ran[0]!.arguments as { text: string }).text.length).toBe(30 * 2 ** 20);
  // the journal keeps its own bounded copy, marked as cut
  const history = await cliJson<{ argsTruncated: boolean; arguments: string }[]>(home, ['history']);
  expect(history[0]).toMatchObject({ argsTruncated: true });
  expect(history[0]!.arguments.length).toBeLessThanOrEqual(64 * 1024);
}, 90_000);
