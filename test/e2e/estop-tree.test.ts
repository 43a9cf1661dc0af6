/**
 * E-Stop and the wrapper's stop reach every process the server started, also the ones that left its process
 * group: workers started with `setsid`, Node's `detached` spawn, a double fork whose middle exited, and one that
 * also emptied its environment. Ground truth is the file system: each worker appends its pid to a file every
 * 50 ms, so after the stop no file may grow and no worker pid may be alive. A process of the same name that the
 * server did not start keeps running. Linux: what the wrapper does there is the strongest (README, E-Stop).
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import type { BrokerClient } from '../../proxy-core/src/ipc/client.js';
import { connectWrapped, decisionOf, onCleanup, processAlive, ROOT, tempDir, waitFor } from '../helpers/airlock.js';
import { brokerForFile } from '../helpers/estop.js';

const DETACHING = join(ROOT, 'test', 'fixtures', 'servers', 'detaching-server.mjs');
const KINDS = ['setsid', 'detached', 'double', 'scrubbed'] as const;

let home: string;
let broker: BrokerClient;
brokerForFile({ allow: ['detaching'], settings: { 'estop-grace-seconds': '0' } }, (shared) => ({ home, broker } = shared));

const sizeOf = (file: string) => (existsSync(file) ? statSync(file).size : 0);
const firstPid = (file: string) => Number(readFileSync(file, 'utf8').split('\n')[0]);

/** Wait until every worker has written; their pids (killed at cleanup, whatever the test found). */
async function workersRunning(dir: string): Promise<number[]> {
  await waitFor(() => KINDS.every((k) => sizeOf(join(dir, `${k}.log`)) > 0), 10_000, 'every worker to write');
  const pids = KINDS.map((k) => firstPid(join(dir, `${k}.log`)));
  onCleanup(() => {
    for (const pid of pids) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone, as it should be
      }
    }
  });
  return pids;
}

/** A process like the workers (same command, own session) that the server did not start: it must survive. */
function decoy(dir: string): { file: string; pid: number } {
  const file = join(dir, 'decoy.log');
  const loop = `trap '' TERM; while :; do echo "$$" >> '${file}'; sleep 0.05; done`;
  // detached: a session of its own, as the workers have
  const child = spawn('sh', ['-c', loop], { stdio: 'ignore', detached: true });
  child.unref();
  onCleanup(() => {
    try {
      process.kill(child.pid!, 'SIGKILL');
    } catch {
      // already gone
    }
  });
  return { file, pid: child.pid! };
}

/** The sizes of the files, then again after `ms`: which ones grew meanwhile. */
async function grewWithin(files: string[], ms: number): Promise<string[]> {
  const before = files.map(sizeOf);
  await new Promise((r) => setTimeout(r, ms));
  return files.filter((f, i) => sizeOf(f) !== before[i]);
}

async function expectAllStopped(dir: string, pids: number[], other: { file: string; pid: number }, kinds: readonly string[] = KINDS): Promise<void> {
  pids = pids.filter((_, i) => kinds.includes(KINDS[i]!));
  await waitFor(() => pids.every((pid) => !processAlive(pid)), 15_000, 'the workers to be gone').catch(() => {
    throw new Error(`workers still running: ${kinds.filter((_, i) => processAlive(pids[i]!)).join(', ')}`);
  });
  // a worker appends every 50 ms: a second with no growth is twenty missed writes
  const files = kinds.map((k) => join(dir, `${k}.log`));
  const grew = await grewWithin([...files, other.file], 1000);
  expect(grew).toEqual([other.file]);
  expect(processAlive(other.pid)).toBe(true);
}

describe.skipIf(process.platform !== 'linux')('detached workers of a server', () => {
  test('E-Stop terminating the server ends every worker that left its process group, and nothing else', async () => {
    const dir = tempDir();
    const other = decoy(dir);
    const w = await connectWrapped({ home, server: 'detaching', command: process.execPath, args: [DETACHING], env: { WORKERS_DIR: dir } });
    const call = w.client.callTool({ name: 'work', arguments: {} });
    const pids = await workersRunning(dir);

    await broker.call('estop', { on: true });
    expect(decisionOf(await call)).toMatchObject({ decidedBy: 'estop', sent: true });
    await waitFor(() => /terminating the MCP server "detaching"/.test(w.stderr()), 10_000, 'the termination');
    await expectAllStopped(dir, pids, other);
    await w.close();
  });

  test('the client closing the wrapper (a normal stop) ends every worker too', async () => {
    const dir = tempDir();
    const other = decoy(dir);
    const w = await connectWrapped({ home, server: 'detaching', command: process.execPath, args: [DETACHING], env: { WORKERS_DIR: dir } });
    void w.client.callTool({ name: 'work', arguments: {} }).catch(() => undefined);
    const pids = await workersRunning(dir);

    await w.close();
    await expectAllStopped(dir, pids, other);
  });

  test('without the native reaper, E-Stop still ends every worker that kept its environment (the /proc fallback)', async () => {
    const dir = tempDir();
    const other = decoy(dir);
    const env = { WORKERS_DIR: dir, AIRLOCK_NATIVE_REAPER: 'off' };
    const w = await connectWrapped({ home, server: 'detaching', command: process.execPath, args: [DETACHING], env });
    const call = w.client.callTool({ name: 'work', arguments: {} });
    const pids = await workersRunning(dir);

    await broker.call('estop', { on: true });
    expect(decisionOf(await call)).toMatchObject({ decidedBy: 'estop', sent: true });
    await waitFor(() => /terminating the MCP server "detaching"/.test(w.stderr()), 10_000, 'the termination');
    // an orphan that also emptied its environment is found by the subreaper alone (README, E-Stop)
    await expectAllStopped(dir, pids, other, ['setsid', 'detached', 'double']);
    await w.close();
  });
});
