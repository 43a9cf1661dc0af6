// What calls for a notification, the favicon's count, and when a page says the broker is down.
import { describe, expect, test } from 'vitest';
import { brokerDown, faviconSvg, noticeFor } from '../../../renderer/src/lib/attention.js';

const ev = (type: string, detail: unknown, server: string | null = 'fs', tool: string | null = 'write') => ({ type, server, tool, detail });

describe('notices', () => {
  test('a held call, a changed definition, a new unprotected server, a tripped E-Stop', () => {
    expect(noticeFor(ev('ticket-created', { ticket: { id: 't1', tool: 'write', server: 'fs', client: 'cursor' } }))).toEqual({ title: 'Airlock: write on fs is waiting', body: 'cursor asked to run it. It runs only if you allow it.', tag: 'ticket-t1' });
    expect(noticeFor(ev('tool-changed', { client: 'c', fields: ['description'] }))?.title).toBe('Airlock: the definition of write on fs changed');
    expect(noticeFor(ev('server-added', { client: 'cursor', protected: false }, 'scratch', null))?.title).toBe('Airlock: a new server scratch is not protected');
    expect(noticeFor(ev('server-added', { protected: true }))).toBeNull();
    expect(noticeFor(ev('estop-on', { by: 'tripwire', reason: 'too many calls' }))?.body).toBe('too many calls. Every tool call is refused until you turn it off.');
    expect(noticeFor(ev('estop-on', { by: 'user' }))).toBeNull();
    expect(noticeFor(ev('call', {}))).toBeNull();
  });

  test('names are shown with their hidden characters made visible', () => {
    expect(noticeFor(ev('tool-changed', {}, 'fs', 'wr\u202Eite'))?.title).not.toContain('\u202E');
  });

  test('favicon carries the count; none without calls', () => {
    expect(decodeURIComponent(faviconSvg(3))).toContain('>3</text>');
    expect(decodeURIComponent(faviconSvg(0))).not.toContain('<text');
    expect(decodeURIComponent(faviconSvg(120))).toContain('>99+</text>');
  });

  test('broker down: not live, or the first load failed', () => {
    expect(brokerDown({ state: 'live' }, null)).toBe(false);
    expect(brokerDown({ state: 'reconnecting', reason: 'socket closed' }, null)).toBe(true);
    expect(brokerDown({ state: 'reconnecting', reason: 'connecting' }, null)).toBe(false);
    expect(brokerDown({ state: 'live' }, 'connection refused')).toBe(true);
  });
});
