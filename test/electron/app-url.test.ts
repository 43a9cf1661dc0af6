/** The app's own protocol: which file an airlock://app URL may name, and which pages are the app's. */
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { fileFor, isAppUrl } from '../../electron/src/app-url.js';

describe("the app's protocol", () => {
  const dist = join('/app', 'renderer', 'dist');
  test.each([
    ['airlock://app/index.html', join(dist, 'index.html')],
    ['airlock://app/', join(dist, 'index.html')],
    ['airlock://app/assets/index-abc.js', join(dist, 'assets', 'index-abc.js')],
    ['airlock://app/assets/a%20b.css', join(dist, 'assets', 'a b.css')],
    ['airlock://app/../../etc/passwd', join(dist, 'etc', 'passwd')],
    ['airlock://app/%2e%2e/%2e%2e/etc/passwd', join(dist, 'etc', 'passwd')],
    ['airlock://app/..%2f..%2fetc%2fpasswd', null],
    ['airlock://app/..%5c..%5cwindows', null],
    ['airlock://app/index.html%00.png', null],
    ['airlock://app/%E0%A4%A', null],
    ['airlock://evil/index.html', null],
    ['file:///etc/passwd', null],
    ['https://app/index.html', null],
  ])('%s', (url, file) => {
    expect(fileFor(dist, url)).toBe(file);
  });

  test('own pages are on the app origin only', () => {
    expect(isAppUrl('airlock://app/index.html#/ticket/x')).toBe(true);
    for (const url of ['airlock://apps/index.html', 'https://app/', 'file:///index.html', '', null, 'not a url']) expect(isAppUrl(url), String(url)).toBe(false);
  });
});
