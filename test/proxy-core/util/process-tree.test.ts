/** util/process-tree: a child and everything it started stop together, in steps, whatever they ignore. */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import { signalTree, stopTree, treeAlive, treeSpawn, TREE_SPAWN_OPTIONS } from '../../../proxy-core/src/util/process-tree.js';
import { processAlive, waitFor } from '../../helpers/airlock.js';

const dirs: string[] = [];
afterEach(() => {
  while (dirs.length) rmSync(dirs.pop()!, { recursive: true, force: true });
});

/** The pid a process wrote to `file`, once it is there. */
async function pidIn(file: string, what: string): Promise<number> {
  let pid = 0;
  await waitFor(() => {
    try {
      pid = Number(readFileSync(file, 'utf8'));
    } catch {
      return false;
    }
    return pid > 0;
  }, 5000, what);
  return pid;
}

/** A process that starts a grandchild; both ignore SIGTERM (and, unless `polite`, stdin closing). */
function tree(polite: boolean) {
  const dir = mkdtempSync(join(tmpdir(), 'al-tree-'));
  dirs.push(dir);
  const pidFile = join(dir, 'grandchild.pid');
  const grandchild = `process.on('SIGTERM', () => {}); require('fs').writeFileSync(${JSON.stringify(pidFile)}, String(process.pid)); setInterval(() => {}, 1000);`;
  const parent = [
    `process.on('SIGTERM', () => {});`,
    `require('child_process').spawn(process.execPath, ['-e', ${JSON.stringify(grandchild)}], { stdio: 'ignore' });`,
    polite ? `process.stdin.on('end', () => process.exit(0)); process.stdin.resume();` : `setInterval(() => {}, 1000);`,
  ].join('\n');
  const child = spawn(process.execPath, ['-e', parent], { stdio: ['pipe', 'ignore', 'ignore'], ...TREE_SPAWN_OPTIONS });
  const grandchildPid = () => pidIn(pidFile, 'the grandchild to start');
  return { child, grandchildPid };
}

describe.skipIf(process.platform === 'win32')('process tree', () => {
  test('stopTree ends a tree that ignores stdin and SIGTERM, grandchildren included, with SIGKILL to the group', async () => {
    const { child, grandchildPid } = tree(false);
    const grandchild = await grandchildPid();
    expect(treeAlive(child.pid!)).toBe(true);
    const started = Date.now();
    await stopTree(child, { stdinGraceMs: 100, termGraceMs: 100 });
    expect(Date.now() - started).toBeGreaterThanOrEqual(200);
    expect(child.signalCode).toBe('SIGKILL');
    await waitFor(() => !processAlive(grandchild), 5000, 'the grandchild to go');
  });

  test('a leader that leaves when its stdin ends is not signalled, but what it left behind is', async () => {
    const { child, grandchildPid } = tree(true);
    const grandchild = await grandchildPid();
    await stopTree(child, { stdinGraceMs: 300, termGraceMs: 100 });
    expect(child.exitCode).toBe(0);
    await waitFor(() => !processAlive(grandchild), 5000, 'the grandchild to go');
  });

  test('stopTree is safe to call again, at once or later', async () => {
    const { child, grandchildPid } = tree(true);
    const grandchild = await grandchildPid();
    const timings = { stdinGraceMs: 300, termGraceMs: 100 };
    await Promise.all([stopTree(child, timings), stopTree(child, timings)]);
    await stopTree(child, timings);
    expect(child.exitCode).toBe(0);
    await waitFor(() => !processAlive(grandchild), 5000, 'the grandchild to go');
  });

  test('signalTree and treeAlive report a group that is gone', async () => {
    const child = spawn(process.execPath, ['-e', ''], { stdio: 'ignore', ...TREE_SPAWN_OPTIONS });
    await new Promise((r) => child.once('exit', r));
    expect(treeAlive(child.pid!)).toBe(false);
    expect(signalTree(child.pid!, 'SIGTERM')).toBe(false);
  });

  test.skipIf(process.platform !== 'linux')('a tree spawned with treeSpawn is ended past its group (Linux): a setsid double fork, after its server left by itself', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'al-tree-'));
    dirs.push(dir);
    const pidFile = join(dir, 'worker.pid');
    // the worker ignores SIGTERM, sits in a session of its own, and its parent is gone: only the marker finds it
    const worker = join(dir, 'worker.sh');
    writeFileSync(worker, `trap '' TERM; echo $$ > '${pidFile}'; while :; do sleep 1; done\n`);
    const server = `require('child_process').spawn('sh', ['-c', ${JSON.stringify(`(setsid sh '${worker}' </dev/null >/dev/null 2>&1 &); exit 0`)}], { stdio: 'ignore' }).on('exit', () => process.exit(0));`;
    // the same command, not started by the tree: it must survive
    const unrelated = spawn('sh', ['-c', `trap '' TERM; while :; do sleep 1; done`], { stdio: 'ignore', detached: true });
    try {
      const tree = treeSpawn(process.env);
      const child = spawn(process.execPath, ['-e', server], { stdio: ['pipe', 'ignore', 'ignore'], ...tree.options });
      tree.track(child);
      const pid = await pidIn(pidFile, 'the worker to start');
      await new Promise((r) => (child.exitCode !== null ? r(null) : child.once('exit', r)));
      expect(processAlive(pid)).toBe(true);
      await stopTree(child, { stdinGraceMs: 100, termGraceMs: 100 });
      await waitFor(() => !processAlive(pid), 5000, 'the worker to go');
      expect(processAlive(unrelated.pid!)).toBe(true);
    } finally {
      unrelated.kill('SIGKILL');
      // whatever the outcome, nothing of the test stays behind
      try {
        process.kill(Number(readFileSync(pidFile, 'utf8')), 'SIGKILL');
      } catch {
        // gone, as it should be
      }
    }
  });
});
