import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import { Store } from '../../../../proxy-core/src/broker/db/store.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
function open(): Store {
  const d = mkdtempSync(join(tmpdir(), 'al-settings-'));
  dirs.push(d);
  return new Store(join(d, 'airlock.db'));
}

describe('SettingsTable reads', () => {
  test('a setting read once is read again as set since, and a setting never set reads as absent until it is', () => {
    const store = open();
    expect(store.settings.get('otlp-endpoint')).toBeUndefined();
    store.settings.set('otlp-endpoint', 'http://127.0.0.1:4318');
    expect(store.settings.get('otlp-endpoint')).toBe('http://127.0.0.1:4318');
    store.settings.set('otlp-endpoint', '');
    expect(store.settings.get('otlp-endpoint')).toBe('');
    store.close();
  });

  test('a value set in a transaction that was rolled back is not served afterwards', () => {
    const store = open();
    store.settings.set('tripwire', 'on');
    expect(store.settings.get('tripwire')).toBe('on');
    expect(() =>
      store.db.transaction(() => {
        store.settings.set('tripwire', 'off');
        expect(store.settings.get('tripwire')).toBe('off');
        throw new Error('rolled back');
      })(),
    ).toThrow('rolled back');
    expect(store.settings.get('tripwire')).toBe('on');
    store.close();
  });

  test('a row whose seal is spoilt while the store is open reads as absent once the store is told (reseal, forget)', () => {
    const store = open();
    store.settings.set('estop', 'on');
    expect(store.settings.get('estop')).toBe('on');
    store.db.prepare("UPDATE settings SET seal = 'x' WHERE key = 'estop'").run();
    store.settings.forget('estop');
    expect(store.settings.get('estop')).toBeUndefined();
    store.close();
  });
});
