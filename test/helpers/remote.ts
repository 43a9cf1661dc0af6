/** Remote MCP servers for `airlock wrap --url` tests: a fixture on 127.0.0.1, and a client through the wrapper. */
import { spawn } from 'node:child_process';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { CLI, onCleanup } from './airlock.js';

/** Start a fixture that prints "listening <port>"; stopped at the next cleanup. */
export async function startRemoteFixture(script: string, env: NodeJS.ProcessEnv = {}): Promise<{ port: number; url: string }> {
  const proc = spawn(process.execPath, [script], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
  onCleanup(() => proc.kill('SIGTERM'));
  const port = await new Promise<number>((resolve, reject) => {
    proc.stdout.on('data', (d: Buffer) => {
      const m = /listening (\d+)/.exec(d.toString());
      if (m) resolve(Number(m[1]));
    });
    proc.once('exit', () => reject(new Error(`${script} exited before listening`)));
  });
  return { port, url: `http://127.0.0.1:${port}/mcp` };
}

/** An SDK client talking to `airlock wrap --name remote ARGS`; what the wrapper writes to stderr is kept. */
export async function connectRemote(home: string, args: string[], env: Record<string, string> = {}): Promise<{ client: Client; stderr: () => string }> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [CLI, 'wrap', '--name', 'remote', '--client', 'test-client', ...args],
    env: { ...(process.env as Record<string, string>), AIRLOCK_HOME: home, ...env },
    stderr: 'pipe',
  });
  let err = '';
  transport.stderr?.on('data', (d: Buffer) => (err += d.toString()));
  const client = new Client({ name: 'airlock-test', version: '1.0.0' });
  onCleanup(() => client.close().catch(() => {}));
  try {
    await client.connect(transport);
  } catch (e) {
    throw Object.assign(e as Error, { stderr: err });
  }
  return { client, stderr: () => err };
}
