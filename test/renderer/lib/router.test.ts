/** The UI's routes: a location hash read as a page, and a page written as a link. */
import { describe, expect, test } from 'vitest';
import { href, parseHash } from '../../../renderer/src/lib/router.js';

describe('router', () => {
  test.each([
    ['', { page: 'approvals' }],
    ['#/', { page: 'approvals' }],
    ['#/approvals', { page: 'approvals' }],
    ['#/activity', { page: 'activity' }],
    ['#/servers', { page: 'servers' }],
    ['#/tools', { page: 'tools' }],
    ['#/tools/my%20server', { page: 'tools', server: 'my server' }],
    ['#/rules', { page: 'rules' }],
    ['#/settings', { page: 'settings' }],
    ['#/ticket/3f9c01ab', { page: 'ticket', id: '3f9c01ab' }],
    ['#/ticket/', { page: 'not-found', path: 'ticket/' }],
    ['#/nope', { page: 'not-found', path: 'nope' }],
  ])('%s', (hash, route) => {
    expect(parseHash(hash)).toEqual(route);
  });

  test('href round-trips', () => {
    for (const r of [{ page: 'tools', server: 'a/b c' }, { page: 'ticket', id: 'x y' }, { page: 'rules' }] as const) expect(parseHash(href(r))).toEqual(r);
  });
});
