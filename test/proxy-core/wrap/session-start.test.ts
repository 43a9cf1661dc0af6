import { describe, expect, test } from 'vitest';
import {
  AIRLOCK_UNAVAILABLE,
  brokerDownAnswer,
  requestOf,
  startFailureAnswer,
  untilBrokerUp,
} from '../../../proxy-core/src/wrap/session-start.js';
import { MemoryLink } from '../../helpers/memory-link.js';

describe('waiting for a broker at initialize', () => {
  test('a link already up answers at once', async () => {
    const link = new MemoryLink();
    expect(await untilBrokerUp(link, 10_000)).toBe(true);
  });

  test('a link that comes up meanwhile (its policy arrives) answers true before the wait is over', async () => {
    const link = new MemoryLink();
    link.state = 'down';
    link.ensureUp = () => Promise.resolve(false);
    const t0 = Date.now();
    const waiting = untilBrokerUp(link, 10_000);
    setTimeout(() => {
      link.state = 'up';
      link.emit('policy', link.policy);
    }, 50);
    expect(await waiting).toBe(true);
    expect(Date.now() - t0).toBeLessThan(5000);
  });

  test('a link still down when the wait is over answers false', async () => {
    const link = new MemoryLink();
    link.state = 'down';
    link.ensureUp = () => Promise.resolve(false);
    expect(await untilBrokerUp(link, 100)).toBe(false);
    expect(link.listenerCount('policy')).toBe(0);
  });
});

describe('the errors a session Airlock cannot serve gets', () => {
  test('broker down: says every call would be refused, and how to start Airlock', () => {
    const r = brokerDownAnswer(0, 'fs');
    expect(r).toMatchObject({ jsonrpc: '2.0', id: 0, error: { code: AIRLOCK_UNAVAILABLE, data: { airlock: 'broker-down' } } });
    expect(r.error!.message).toMatch(/^Airlock is not running, so every call to "fs" would be refused.*`airlock daemon`.*reconnect/);
  });

  test('server failed: names the command and why', () => {
    const r = startFailureAnswer('a', 'fs', ['/opt/missing', '--stdio'], 'could not be started: command not found');
    expect(r.error!.message).toBe('Airlock could not run the MCP server "fs": its command `/opt/missing --stdio` could not be started: command not found. Check the command in this client\'s MCP settings.');
  });

  test("the client's requests are told from notifications and other lines", () => {
    expect(requestOf(Buffer.from('{"jsonrpc":"2.0","id":1,"method":"initialize"}'))).toEqual({ id: 1, method: 'initialize' });
    expect(requestOf(Buffer.from('{"jsonrpc":"2.0","id":"p","method":"server/discover"}'))).toEqual({ id: 'p', method: 'server/discover' });
    expect(requestOf(Buffer.from('{"jsonrpc":"2.0","method":"notifications/initialized"}'))).toBeNull();
    expect(requestOf(Buffer.from('{"jsonrpc":"2.0","id":null,"method":"x"}'))).toBeNull();
    expect(requestOf(Buffer.from('not json'))).toBeNull();
    expect(requestOf(Buffer.from('[1]'))).toBeNull();
  });
});
