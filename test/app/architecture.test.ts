/**
 * Keeps the app's shape true: it reaches proxy-core through its public entry only, its preload needs nothing
 * but `electron`, every window is made in one place (with the locked-down preferences) and every IPC handler
 * is registered in one place (where senders and arguments are checked), and Electron is stood in for by one
 * module in the tests.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { expect, test } from 'vitest';
import { ROOT } from '../helpers/airlock.js';

const SRC = join(ROOT, 'electron', 'src');
const sources = readdirSync(SRC).filter((f) => /\.c?ts$/.test(f));
const text = (f: string) => readFileSync(join(SRC, f), 'utf8');

/** Every module specifier a file imports, and whether the import is for types only. */
function imports(source: string): { spec: string; typeOnly: boolean }[] {
  const found = [...source.matchAll(/^\s*import\s+(type\s+)?(?:[^'"]*?\s+from\s+)?['"]([^'"]+)['"]/gm)].map((m) => ({ spec: m[2]!, typeOnly: Boolean(m[1]) }));
  found.push(...[...source.matchAll(/import\(\s*['"]([^'"]+)['"]\s*\)/g)].map((m) => ({ spec: m[1]!, typeOnly: false })));
  return found;
}

test('the app imports proxy-core through its public entry only, and never the renderer', () => {
  expect(sources.length).toBeGreaterThan(10);
  for (const f of sources) {
    for (const { spec } of imports(text(f))) {
      expect(spec, f).not.toMatch(/proxy-core\/|^\.\.\/|renderer/);
      if (spec.startsWith('@airlock/')) expect(spec, f).toBe('@airlock/proxy-core');
    }
    expect(text(f), f).not.toMatch(/console\.log/);
  }
});

test('the preload is CommonJS that needs only electron at run time', () => {
  const preload = text('preload.cts');
  const runtime = imports(preload).filter((i) => !i.typeOnly);
  expect(runtime.map((i) => i.spec)).toEqual(['electron']);
  const built = readFileSync(join(ROOT, 'electron', 'dist', 'preload.cjs'), 'utf8');
  expect([...built.matchAll(/require\(["']([^"']+)["']\)/g)].map((m) => m[1])).toEqual(['electron']);
  expect(built).not.toMatch(/^\s*(import|export)\s/m);
});

test('windows are made in one place, IPC is answered in one place', () => {
  const where = (re: RegExp) => sources.filter((f) => re.test(text(f)));
  expect(where(/new BrowserWindow\(/)).toEqual(['windows.ts']);
  expect(where(/ipcMain\.(handle|on|once)\(/)).toEqual(['ipc.ts']);
  expect(where(/webPreferences/)).toEqual(['windows.ts']);
  for (const setting of ['sandbox: true', 'contextIsolation: true', 'nodeIntegration: false']) expect(text('windows.ts')).toContain(setting);
});

test('Electron is stood in for by exactly one module in the tests', () => {
  const walk = (d: string): string[] =>
    readdirSync(d).flatMap((name) => {
      const p = join(d, name);
      return statSync(p).isDirectory() ? walk(p) : /\.(ts|mts|mjs|js)$/.test(name) ? [p] : [];
    });
  const standIns = walk(join(ROOT, 'test')).filter((f) => {
    const t = readFileSync(f, 'utf8');
    return /vi\.mock\(\s*['"]electron['"]/.test(t) || /export (class|const) (BrowserWindow|Tray)\b/.test(t);
  });
  expect(standIns.map((f) => relative(ROOT, f).split(sep).join('/'))).toEqual(['test/app/electron-stand-in.mjs']);
});
