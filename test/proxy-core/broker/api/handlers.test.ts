/**
 * One entry per method: every method the protocol declares has exactly one handler in the broker, the role
 * check comes from the declaration, a request passes the dispatch chain's steps in order (errors travel back
 * through it), and front ends take each method's wait from the same declaration.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import { z } from 'zod';
import { type Call, checkParams, compose, resolve, runHandler } from '../../../../proxy-core/src/broker/api/dispatch.js';
import { Handlers, inProcess } from '../../../../proxy-core/src/broker/api/handlers.js';
import { Broker } from '../../../../proxy-core/src/broker/broker.js';
import { Store } from '../../../../proxy-core/src/broker/db/store.js';
import { IpcError } from '../../../../proxy-core/src/ipc/channel.js';
import { type AnyMethod, methods, QUICK_MS, userApi, waitMs, waitsOnTicket, wrapperApi } from '../../../../proxy-core/src/protocol/api.js';
import { method } from '../../../../proxy-core/src/protocol/method.js';
import { approve } from '../../../../proxy-core/src/protocol/methods/tickets.js';
import { ROOT } from '../../../helpers/airlock.js';
import { FakeClock } from '../../../helpers/fake-clock.js';
import { channelPair } from '../../../helpers/memory-channel.js';

const dirs: string[] = [];
const stores: Store[] = [];
afterEach(() => {
  for (const s of stores.splice(0)) s.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function setup(): Broker {
  const dir = mkdtempSync(join(tmpdir(), 'al-methods-'));
  dirs.push(dir);
  const store = new Store(join(dir, 'airlock.db'));
  stores.push(store);
  return new Broker({ presence: { required: false }, store, dataDir: dir, ticketTimeoutSeconds: 120, ackTimeoutMs: 1500, clock: new FakeClock() });
}

const declared = Object.values(methods as Record<string, AnyMethod>);

describe('one entry per method', () => {
  test('every declared method has exactly one handler, bound to its own declaration', () => {
    const broker = setup();
    expect(broker.handlers.missing()).toEqual([]);
    for (const d of declared) expect(broker.handlers.get(d.name)?.decl, d.name).toBe(d);
    // a second handler for a method is refused, and so is one for an undeclared look-alike
    expect(() => broker.handlers.on(approve, () => ({ ok: true as const, ticket: {} as never, remember: 'once' as const }))).toThrow(/has a handler already/);
    expect(() => new Handlers().on({ ...approve }, () => ({ ok: true as const, ticket: {} as never, remember: 'once' as const }))).toThrow(/not a declared method/);
    // a table with a method left unbound does not start
    const partial = new Handlers();
    partial.on(approve, () => ({ ok: true as const, ticket: {} as never, remember: 'once' as const }));
    expect(() => partial.complete()).toThrow(/no handler/);
  });

  test('the user and wrapper tables are the declarations, split by their role', () => {
    for (const d of declared) {
      expect(Object.hasOwn(userApi, d.name), d.name).toBe(d.role !== 'wrapper');
      expect(Object.hasOwn(wrapperApi, d.name), d.name).toBe(d.role !== 'user');
    }
    expect(Object.keys(userApi).length + Object.keys(wrapperApi).length).toBe(declared.length + declared.filter((d) => d.role === 'both').length);
  });

  test('who may call a method is its declaration: every other caller is refused before its params are read', async () => {
    const broker = setup();
    const [end, peer] = channelPair();
    broker.attach(end, 'ui');
    const [wEnd, wPeer] = channelPair();
    broker.attach(wEnd, 'wrapper');
    for (const d of declared) {
      if (d.role === 'wrapper') {
        await expect(peer.request(d.name, {}), d.name).rejects.toMatchObject({ code: 'forbidden', message: `${d.name} is for wrappers, not for a front end` });
        expect(() => broker.callUser(d.name, {}), d.name).toThrow(`${d.name} is for wrappers, not for a front end`);
      }
      if (d.role === 'user') await expect(wPeer.request(d.name, {}), d.name).rejects.toMatchObject({ code: 'forbidden', message: `${d.name} is for a person's front end, not for a wrapper` });
    }
    for (const name of ['no.such', '__proto__', 'constructor', 'hasOwnProperty']) {
      await expect(peer.request(name, {}), name).rejects.toMatchObject({ code: 'unknown-method', message: `unknown method ${name}` });
      await expect(wPeer.request(name, {}), name).rejects.toMatchObject({ code: 'unknown-method' });
    }
    // a role of "both" lets either caller through
    const either = method({ name: 'either', role: 'both', params: z.object({}), result: z.literal(1), wait: QUICK_MS, rights: 'read' });
    const both = new Handlers({ either });
    both.on(either, () => 1 as const);
    const run = compose([resolve(both), checkParams, runHandler]);
    for (const caller of ['user', 'wrapper'] as const) expect(run({ method: 'either', params: {}, caller, context: inProcess() })).toBe(1);
  });

  test('wrapper methods other than session.open need the session first', async () => {
    const broker = setup();
    const [end, peer] = channelPair();
    broker.attach(end, 'wrapper');
    for (const d of declared.filter((x) => x.role === 'wrapper' && x.name !== 'session.open')) {
      // params that pass the schema where it has defaults; otherwise the schema refuses first, as before
      const answer = peer.request(d.name, {});
      await expect(answer, d.name).rejects.toBeInstanceOf(IpcError);
      await answer.catch((err: IpcError) => expect(['no-session', 'bad-request'], d.name).toContain(err.code));
    }
    await expect(peer.request('catalog.update', {})).rejects.toMatchObject({ code: 'no-session', message: 'open a session first' });
  });
});

describe('the dispatch chain', () => {
  const call = (): Call => ({ method: 'm', params: {}, caller: 'user', context: inProcess() });

  test('steps run in order, each may change what comes back, and an error travels back through them', async () => {
    const seen: string[] = [];
    const chain = compose([
      (_c, next) => {
        seen.push('a');
        try {
          return next();
        } catch (err) {
          return `caught: ${(err as Error).message}`;
        }
      },
      (_c, next) => {
        seen.push('b');
        return next();
      },
      () => {
        seen.push('c');
        throw new Error('refused');
      },
    ]);
    expect(chain(call())).toBe('caught: refused');
    expect(seen).toEqual(['a', 'b', 'c']);
  });

  test('next() twice is a fault of the step, not a second run', () => {
    const runs: number[] = [];
    const chain = compose([
      (_c, next) => {
        next();
        return next();
      },
      () => runs.push(1),
    ]);
    expect(() => chain(call())).toThrow(/twice/);
    expect(runs).toEqual([1]);
  });
});

describe('waits', () => {
  test('every method declares a positive wait; the slow ones say how they are slow', () => {
    for (const d of declared) {
      const sample = d.name === 'inspect' ? { timeoutSeconds: 20 } : {};
      expect(waitMs(d, sample, 120_000), d.name).toBeGreaterThan(0);
    }
    expect(waitMs(methods.status, {})).toBe(QUICK_MS);
    expect(waitMs(methods['ticket.arguments'], {})).toBe(30_000);
    expect(waitMs(methods.inspect, { timeoutSeconds: 40 })).toBe(55_000);
    expect(waitMs(methods['clients.protect'], {})).toBe(60_000);
    expect(declared.filter(waitsOnTicket).map((d) => d.name).sort()).toEqual(['call.ask', 'rollback', 'undo', 'undo.last']);
    expect(waitMs(methods.undo, {}, 120_000)).toBe(180_000);
    expect(waitMs(methods.rollback, {}, 5_000)).toBe(650_000);
    expect(waitMs(methods.rollback, {}, 120_000)).toBe(1_800_000);
  });

  test('the CLI and the app pass no waits of their own: they take the declaration', () => {
    const sources = (dir: string): string[] =>
      readdirSync(dir).flatMap((name) => {
        const p = join(dir, name);
        return statSync(p).isDirectory() ? sources(p) : p.endsWith('.ts') ? [p] : [];
      });
    for (const f of [...sources(join(ROOT, 'proxy-core', 'src', 'cli')), ...sources(join(ROOT, 'electron', 'src'))]) {
      const text = readFileSync(f, 'utf8');
      // a call given a wait of its own: call('m', {...}, 30_000), call('m', {...}, await ...)
      expect(text, f).not.toMatch(/\bcall\('[^'\n]+', \{[^\n]*\}, (\d[\d_]*|await [^\n]*|Math\.[^\n]*)\)/);
      expect(text, f).not.toMatch(/client\.call\(method, params, /);
      expect(text, f).not.toMatch(/timeoutFor\(/);
    }
  });
});
