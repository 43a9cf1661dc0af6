import { afterEach, expect, test } from 'vitest';
import { ServerProcess } from '../../../proxy-core/src/inspect/server-process.js';

// A server that never reads its stdin: what the inspector sends fills the pipe and then waits.
const DEAF = ['-e', 'process.stdin.pause(); setInterval(() => {}, 1000);'];

const started: ServerProcess[] = [];
afterEach(async () => {
  await Promise.all(started.splice(0).map((p) => p.close(true)));
});

async function deafServer(): Promise<ServerProcess> {
  const p = new ServerProcess({ command: process.execPath, args: DEAF });
  started.push(p);
  await p.start();
  return p;
}

const stdinOf = (p: ServerProcess) => (p as unknown as { child: { stdin: NodeJS.WritableStream & { listenerCount(e: string): number } } }).child.stdin;
const big = (i: number) => ({ jsonrpc: '2.0' as const, id: i, method: 'tools/call', params: { name: 'x', arguments: { text: 'x'.repeat(64 * 1024) } } });

test('many sends to a server that stops reading wait on one drain listener, with no warning', async () => {
  const warnings: string[] = [];
  const onWarning = (w: Error) => warnings.push(w.name);
  process.on('warning', onWarning);
  try {
    const p = await deafServer();
    const sends = Array.from({ length: 40 }, (_, i) => p.send(big(i)));
    const settled: number[] = [];
    sends.forEach((s, i) => void s.then(() => settled.push(i)));
    await new Promise((r) => setImmediate(r));
    const stdin = stdinOf(p);
    // the pipe is full: most sends wait, all of them on one listener
    expect(settled.length).toBeLessThan(40);
    expect(stdin.listenerCount('drain')).toBe(1);
    // the server exits without reading: no send waits for a drain that cannot come
    await p.close(true);
    const all = await Promise.race([Promise.allSettled(sends).then(() => 'settled'), new Promise((r) => setTimeout(() => r('still waiting'), 5000))]);
    expect(all).toBe('settled');
    expect(stdin.listenerCount('drain')).toBe(0);
  } finally {
    process.off('warning', onWarning);
  }
  expect(warnings).not.toContain('MaxListenersExceededWarning');
});

test('a send after the server has gone is refused at once', async () => {
  const p = await deafServer();
  await p.close(true);
  await expect(p.send(big(1))).rejects.toThrow(/not running/);
});
