// Stopping an inspection: Ctrl-C on `airlock inspect`, or an AbortSignal from a library caller, stops the
// server's whole tree (it runs in its own process group, so the terminal's SIGINT never reaches it).
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, test } from 'vitest';
import { inspectServer } from '../../proxy-core/src/inspect/inspect.js';
import { ExecutionPolicy } from '../../proxy-core/src/inspect/execution-policy.js';
import { processAlive, waitFor } from '../helpers/airlock.js';
import { ensureBuilt, ROOT } from './run-cli.js';

beforeAll(ensureBuilt, 120_000);

const dirs: string[] = [];
afterEach(() => {
  while (dirs.length) rmSync(dirs.pop()!, { recursive: true, force: true });
});

/**
 * A server that records its pid and a grandchild's and the methods it is asked, ignores SIGTERM and stdin
 * closing, and answers initialize only when `answersInitialize` (then hangs on everything else).
 */
function stubbornServer(answersInitialize: boolean): { command: string; args: string[]; pids: () => number[]; asked: () => string[] } {
  const dir = mkdtempSync(join(tmpdir(), 'al-interrupt-'));
  dirs.push(dir);
  const pids = join(dir, 'pids');
  const methods = join(dir, 'methods');
  const source = `
    const fs = require('fs');
    process.on('SIGTERM', () => {});
    const kid = require('child_process').spawn(process.execPath, ['-e', "process.on('SIGTERM', () => {}); setInterval(() => {}, 1000)"], { stdio: 'ignore' });
    fs.writeFileSync(${JSON.stringify(pids)}, process.pid + ' ' + kid.pid);
    let buf = '';
    process.stdin.on('data', (c) => {
      buf += c;
      let i;
      while ((i = buf.indexOf('\\n')) >= 0) {
        const m = JSON.parse(buf.slice(0, i));
        buf = buf.slice(i + 1);
        fs.appendFileSync(${JSON.stringify(methods)}, m.method + '\\n');
        if (${answersInitialize} && m.method === 'initialize') {
          process.stdout.write(JSON.stringify({ jsonrpc: '2.0', id: m.id, result: { protocolVersion: m.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'stubborn', version: '1' } } }) + '\\n');
        }
      }
    });
    setInterval(() => {}, 1000);
  `;
  return {
    command: process.execPath,
    args: ['-e', source],
    pids: () => (existsSync(pids) ? readFileSync(pids, 'utf8').split(' ').map(Number) : []),
    asked: () => (existsSync(methods) ? readFileSync(methods, 'utf8').split('\n') : []),
  };
}

/** `inspectServer` on a stubborn server, with a signal to abort it. */
async function inspecting(answersInitialize: boolean) {
  const server = stubbornServer(answersInitialize);
  const controller = new AbortController();
  const running = inspectServer({ command: server.command, args: server.args }, { policy: new ExecutionPolicy(), timeoutMs: 60_000, signal: controller.signal });
  running.catch(() => undefined);
  await waitFor(() => server.pids().length === 2, 10_000, 'the server to start');
  return { server, controller, running };
}

describe('interrupting an inspection', () => {
  test('Ctrl-C: exit 130, one line on stderr, and the server tree is gone', async () => {
    const server = stubbornServer(false);
    const cli = spawn(process.execPath, [join(ROOT, 'bin/airlock.js'), 'inspect', '--timeout', '60', '--', server.command, ...server.args], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    cli.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const exited = new Promise<number | null>((r) => cli.on('close', (code) => r(code)));
    await waitFor(() => server.pids().length === 2, 10_000, 'the server to start');
    cli.kill('SIGINT');
    expect(await exited).toBe(130);
    expect(stderr.trim().split('\n')).toEqual(['airlock: inspect interrupted; the server was stopped']);
    for (const pid of server.pids()) await waitFor(() => !processAlive(pid), 3000, `process ${pid} to go`);
  });

  test('an AbortSignal stops it mid-pass: the call rejects with the reason and the tree is stopped', async () => {
    const { server, controller, running } = await inspecting(true);
    // initialize answered, tools/list hanging
    await waitFor(() => server.asked().includes('tools/list'), 10_000, 'tools/list');
    const reason = new Error('user cancelled');
    controller.abort(reason);
    const started = Date.now();
    await expect(running).rejects.toBe(reason);
    expect(Date.now() - started).toBeLessThan(3000);
    for (const pid of server.pids()) await waitFor(() => !processAlive(pid), 2000, `process ${pid} to go`);
  });

  test('an AbortSignal during start-up rejects with the reason and stops the tree', async () => {
    const { server, controller, running } = await inspecting(false);
    controller.abort();
    await expect(running).rejects.toMatchObject({ name: 'AbortError' });
    for (const pid of server.pids()) await waitFor(() => !processAlive(pid), 2000, `process ${pid} to go`);
  });
});
