/**
 * The one end-to-end set-up: a broker (`airlock daemon`, optionally with its UI host) in a fresh home, the
 * broker's client when a test talks to it directly, a fixture server (or the filesystem server from npm) behind
 * `airlock wrap` with the real MCP SDK client connected to it (or a client config's entry started as a client
 * starts it), and all of it stopped and
 * removed by the next `cleanup()` (airlock.ts). Every step waits on a readiness signal (the daemon's own lines,
 * the MCP handshake), never on time.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { BrokerClient } from '../../proxy-core/src/ipc/client.js';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { cli, connectWrapped, type Daemon, FILESYSTEM, fixture, onCleanup, startDaemon, tempDir, waitFor, waitForSessions, type WrapOptions, type Wrapped } from './airlock.js';

export interface AirlockOptions {
  /** The data dir to use: a fresh temp folder unless given (a broker started again on the same data). */
  home?: string;
  /** Flags of `airlock daemon`. */
  args?: string[];
  env?: NodeJS.ProcessEnv;
  /** Keep presence proofs on (a broker as a person runs it): without it, `--no-presence`, as most suites want. */
  presence?: boolean;
}

export interface Airlock {
  home: string;
  daemon: Daemon;
}

/** `airlock daemon` in a fresh home (or the given one), running. */
export async function startAirlock(o: AirlockOptions = {}): Promise<Airlock> {
  const home = o.home ?? tempDir();
  const daemon = await startDaemon(home, o.args ?? [], o.env ?? {}, o.presence ?? false);
  return { home, daemon };
}

export interface BrokerOptions extends AirlockOptions {
  /** Servers (`*` for all) whose every tool gets an allow rule before the test starts. */
  allow?: string[];
  /** Settings set before the test starts, in order. */
  settings?: Record<string, string>;
}

/** A running broker and a client of it (closed by cleanup), with the rules and settings asked for in place. */
export async function startBroker(o: BrokerOptions = {}): Promise<Airlock & { broker: BrokerClient }> {
  const airlock = await startAirlock(o);
  const broker = await BrokerClient.connect({ dir: airlock.home });
  onCleanup(() => broker.close());
  for (const server of o.allow ?? []) await broker.call('rules.add', { action: 'allow', server, tool: '*' });
  for (const [key, value] of Object.entries(o.settings ?? {})) await broker.call('settings.set', { key, value });
  return { ...airlock, broker };
}

const UI_LINE = /airlock: UI at (http:\/\/localhost:(\d+)\/\?token=([A-Za-z0-9_-]+))\n/;

export interface UiAirlock extends Airlock {
  /** The sign-in link the daemon printed. */
  url: URL;
  link: string;
  port: number;
  token: string;
  /** `http://localhost:PORT` (where passkeys work) */
  origin: string;
}

/** `airlock daemon --ui --port PORT` (0: any free port), once it has printed where its UI is. */
export async function startUiAirlock(o: AirlockOptions & { port?: number } = {}): Promise<UiAirlock> {
  const airlock = await startAirlock({ ...o, args: ['--ui', '--port', String(o.port ?? 0), ...(o.args ?? [])] });
  const [, link, port, token] = await airlock.daemon.untilStderr(UI_LINE, 10_000, "the UI line on the daemon's stderr");
  const url = new URL(link!);
  return { ...airlock, url, link: link!, port: Number(port), token: token!, origin: url.origin };
}

/** The fixture server as `fixture()` describes it: how to start it, and the log it keeps of what it ran. */
export type Fixture = ReturnType<typeof fixture>;

export interface FixtureOptions extends Partial<Omit<WrapOptions, 'home' | 'command' | 'args'>> {
  /** The fixture server's own flags (`--catalog adversarial`, `--noise`, …). */
  fixture?: string[];
  /** Capabilities the MCP client declares. */
  capabilities?: Record<string, unknown>;
}

/** The fixture server behind `airlock wrap` in `home`, the SDK client connected; `fx.log` is what it ran. */
export async function wrapFixture(home: string, o: FixtureOptions = {}): Promise<{ fx: Fixture; w: Wrapped }> {
  const { fixture: flags, capabilities, env, ...wrap } = o;
  const fx = fixture(home, flags ?? []);
  const w = await connectWrapped({ home, ...wrap, command: fx.command, args: fx.args, env: { ...fx.env, ...env } }, capabilities ?? {});
  return { fx, w };
}

/** A broker in a fresh home and the fixture server wrapped against it: the set-up most end-to-end tests start from. */
export async function airlockWithFixture(o: FixtureOptions & { daemon?: AirlockOptions } = {}): Promise<Airlock & { fx: Fixture; w: Wrapped }> {
  const { daemon, ...wrap } = o;
  const airlock = await startAirlock(daemon);
  return { ...airlock, ...(await wrapFixture(airlock.home, wrap)) };
}

/**
 * A broker in `home` and the filesystem server from npm wrapped against it as server "filesystem", on a folder of
 * its own (`root`, made here); `allow`: the tools an allow rule lets through without asking.
 */
export async function airlockWithFilesystem(home: string, allow?: string): Promise<{ root: string; w: Wrapped; daemon: Daemon }> {
  const root = join(home, 'files');
  mkdirSync(root);
  const { daemon } = await startAirlock({ home });
  const w = await connectWrapped({ home, server: 'filesystem', command: process.execPath, args: [FILESYSTEM, root] });
  if (allow) await cli(home, ['rules', 'add', 'allow', '--server', 'filesystem', '--tool', allow]);
  return { root, w, daemon };
}

/**
 * The SDK client started from a client config's entry exactly as a client starts it: the entry's command and
 * args, and only the environment given (a GUI client's or the Python SDK's small one, the entry's env in it).
 */
export async function connectEntry(entry: { command: string; args: string[] }, env: Record<string, string>, name = 'airlock-test'): Promise<Client> {
  const transport = new StdioClientTransport({ command: entry.command, args: entry.args, env, stderr: 'pipe' });
  const client = new Client({ name, version: '1.0.0' });
  await client.connect(transport);
  onCleanup(() => client.close().catch(() => {}));
  return client;
}

/**
 * A client's calls (`next`, one at a time, as fast as they go; `made()` counts them) through the broker in `home`,
 * SIGKILLed `rounds` times at a moment the calls cannot choose (after 1 to 40 of them) and started again each time.
 * Returns the daemon running at the end, with the wrapper connected to it again.
 */
export async function killedUnderCalls(home: string, daemon: Daemon, made: () => number, next: () => Promise<void>, rounds = 5): Promise<Daemon> {
  for (let round = 0; round < rounds; round++) {
    await waitForSessions(home, 1);
    let going = true;
    const loop = (async () => {
      while (going) await next();
    })();
    const until = made() + 1 + Math.floor(Math.random() * 40);
    await waitFor(() => made() >= until, 20_000, `${until} calls`);
    const exited = new Promise((r) => daemon.proc.once('close', r));
    daemon.proc.kill('SIGKILL');
    await exited;
    going = false;
    await loop;
    daemon = await startDaemon(home);
  }
  await waitForSessions(home, 1);
  return daemon;
}
