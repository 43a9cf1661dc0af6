/**
 * End-to-end tests run the compiled CLI (bin/airlock.js → proxy-core/dist). Before any test runs, every source
 * file must have a compiled file at least as new as itself; if one does not, the build runs here, so a test
 * never judges yesterday's code.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

const ROOT = join(import.meta.dirname, '..', '..');
const SRC = join(ROOT, 'proxy-core', 'src');
const DIST = join(ROOT, 'proxy-core', 'dist');

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    return e.isDirectory() ? sources(p) : e.name.endsWith('.ts') ? [p] : [];
  });
}

function stale(): string[] {
  return sources(SRC).filter((src) => {
    const out = join(DIST, relative(SRC, src)).replace(/\.ts$/, '.js');
    return !existsSync(out) || statSync(out).mtimeMs < statSync(src).mtimeMs;
  });
}

export default function setup(): void {
  const before = stale();
  if (before.length === 0) return;
  process.stderr.write(`proxy-core/dist is older than ${before.length} source file(s) (${relative(ROOT, before[0]!)}…): building\n`);
  execFileSync(process.execPath, [join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', join(ROOT, 'tsconfig.json')], { stdio: 'inherit' });
  const after = stale();
  if (after.length > 0) throw new Error(`the build left ${after.length} compiled file(s) older than their source: ${after.slice(0, 3).map((f) => relative(ROOT, f)).join(', ')}`);
}
