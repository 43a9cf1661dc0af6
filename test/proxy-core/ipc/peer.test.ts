import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { parseStat, peerOf, type Peer } from '../../../proxy-core/src/ipc/peer.js';
import { nativeAddon } from '../../../proxy-core/src/util/native.js';

const linux = process.platform === 'linux';
// the addon is built by `npm install`; CI builds it, so a missing one fails here rather than skipping
const addonBuilt = nativeAddon()?.peerCredentials !== undefined;

/** A Unix socket server that answers, for each connection, the peer seen and the first line the peer sent. */
class PeerServer {
  readonly dir = mkdtempSync(join(tmpdir(), 'airlock-peer-'));
  readonly path = join(this.dir, 's');
  private readonly server: Server;
  private readonly waiting: ((seen: { peer: Peer | null; line: string }) => void)[] = [];

  constructor() {
    this.server = createServer((socket) => {
      // read the peer at accept time, as the broker does
      const peer = peerOf(socket);
      let text = '';
      socket.setEncoding('utf8');
      socket.on('data', (d: string) => {
        text += d;
        const nl = text.indexOf('\n');
        if (nl >= 0) {
          this.waiting.shift()?.({ peer, line: text.slice(0, nl) });
          socket.end();
        }
      });
    });
  }

  listen(): Promise<void> {
    return new Promise((resolve) => this.server.listen(this.path, resolve));
  }

  next(): Promise<{ peer: Peer | null; line: string }> {
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  close(): void {
    this.server.close();
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** Node code that connects to `path` and writes its own pid, then waits for the server to end the connection. */
const clientCode = (path: string) => `const s=require('net').createConnection(${JSON.stringify(path)},()=>s.write(process.pid+'\\n'));s.on('data',()=>{});s.on('end',()=>process.exit(0));`;

function run(cmd: string, args: string[]): ChildProcess {
  const child = spawn(cmd, args, { stdio: ['ignore', 'ignore', 'inherit'] });
  child.on('error', () => {});
  return child;
}

describe.skipIf(!linux)('peerOf (Linux)', () => {
  const server = new PeerServer();
  beforeAll(() => server.listen());
  afterAll(() => server.close());

  test('the native addon with peer credentials is built', () => {
    expect(addonBuilt).toBe(true);
  });

  test('a connection from this process: its pid, uid, gid, executable and start time', async () => {
    const seen = server.next();
    const client: Socket = createConnection(server.path, () => client.write('me\n'));
    const { peer } = await seen;
    client.destroy();
    const stat = parseStat(readFileSync('/proc/self/stat', 'utf8'))!;
    expect(peer).toEqual({
      pid: process.pid,
      uid: process.getuid!(),
      gid: process.getgid!(),
      exe: realpathSync(process.execPath),
      tty: stat.ttyNr !== 0,
      startTime: stat.startTime,
    });
    expect(peer!.startTime).toMatch(/^\d+$/);
  });

  test('a connection from a child process: the child, not this process', async () => {
    const seen = server.next();
    const child = run(process.execPath, ['-e', clientCode(server.path)]);
    const { peer, line } = await seen;
    expect(peer!.pid).toBe(child.pid);
    expect(String(peer!.pid)).toBe(line);
    expect(peer!.pid).not.toBe(process.pid);
  });

  test('under a terminal a process has one; a setsid child with stdin from /dev/null has none', async () => {
    // script(1) gives its command a pseudo-terminal as controlling terminal, whether or not this process has one
    const withTerminal = server.next();
    run('script', ['-qec', `${process.execPath} -e "${clientCode(server.path).replace(/"/g, '\\"')}"`, '/dev/null']);
    const a = await withTerminal;
    expect(String(a.peer!.pid)).toBe(a.line);
    expect(a.peer!.tty).toBe(true);

    const detached = server.next();
    run('script', ['-qec', `setsid ${process.execPath} -e "${clientCode(server.path).replace(/"/g, '\\"')}" </dev/null`, '/dev/null']);
    const b = await detached;
    expect(String(b.peer!.pid)).toBe(b.line);
    expect(b.peer!.tty).toBe(false);
    expect(b.peer!.startTime).toMatch(/^\d+$/);
  });

  test('a TCP connection has no peer process: null, never a guess', async () => {
    const tcp = createServer();
    const accepted = new Promise<Socket>((resolve) => tcp.once('connection', resolve));
    await new Promise<void>((resolve) => tcp.listen(0, '127.0.0.1', resolve));
    const port = (tcp.address() as { port: number }).port;
    const client = createConnection(port, '127.0.0.1');
    const socket = await accepted;
    expect(peerOf(socket)).toBeNull();
    client.destroy();
    socket.destroy();
    tcp.close();
  });

  test('a socket already closed has no fd: null', async () => {
    const seen = new Promise<Socket>((resolve) => {
      const s = createServer((socket) => {
        resolve(socket);
        s.close();
      });
      s.listen(join(server.dir, 'closed'), () => createConnection(join(server.dir, 'closed')).on('error', () => {}));
    });
    const socket = await seen;
    socket.destroy();
    expect(peerOf(socket)).toBeNull();
  });
});

describe('parseStat', () => {
  // field 7 (tty_nr) is 34816 (/dev/pts/0), field 22 (starttime) 123456
  const tail = 'S 1 100 100 34816 100 4194560 1 0 0 0 0 0 0 0 20 0 1 0 123456 1000 100 18446744073709551615';

  test('a plain line', () => {
    expect(parseStat(`4242 (node) ${tail}`)).toEqual({ ttyNr: 34816, startTime: '123456' });
  });

  test('comm with spaces and parentheses: fields are counted after the last )', () => {
    expect(parseStat(`4242 (a) b (c) ${tail}`)).toEqual({ ttyNr: 34816, startTime: '123456' });
    expect(parseStat(`4242 (x) 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21) ${tail}`)).toEqual({ ttyNr: 34816, startTime: '123456' });
    expect(parseStat(`4242 ()) ${tail}`)).toEqual({ ttyNr: 34816, startTime: '123456' });
  });

  test('no terminal: tty_nr 0', () => {
    expect(parseStat(`7 (sh) ${tail.replace('34816', '0')}`)).toEqual({ ttyNr: 0, startTime: '123456' });
  });

  test('what is not a stat line is null', () => {
    expect(parseStat('')).toBeNull();
    expect(parseStat('4242 node S 1 100')).toBeNull();
    expect(parseStat(`4242 (node) S 1 100 100`)).toBeNull();
    expect(parseStat(`4242 (node) ${tail.replace('123456', 'x')}`)).toBeNull();
    expect(parseStat(`4242 (node) ${tail.replace('34816', 'tty')}`)).toBeNull();
    expect(parseStat(`4242 )node( ${tail}`)).toBeNull();
  });
});
