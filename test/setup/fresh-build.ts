/**
 * The tests run what `npm run build` makes: the CLI (bin/airlock.js → proxy-core/dist, its bundle in
 * proxy-core/dist/cli-bundle, and for `wrap` proxy-core/dist/wrap-bundle), the renderer the UI host serves
 * (renderer/dist) and the desktop app's main process (electron/dist). Before any test runs, each must be at least
 * as new as every file it is built from; if one is not, its build runs here, so a test never judges yesterday's
 * code.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, sep } from 'node:path';

const ROOT = join(import.meta.dirname, '..', '..');
const bin = (...path: string[]) => join(ROOT, 'node_modules', ...path);

function sources(dir: string, ext: RegExp): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    return e.isDirectory() ? sources(p, ext) : ext.test(e.name) ? [p] : [];
  });
}

/** Each source whose compiled file (same relative path in `dist`, `.ts`→`.js`, `.cts`→`.cjs`) is missing or older. */
function staleCompiled(src: string, dist: string): string[] {
  return sources(src, /\.c?ts$/).filter((file) => {
    const out = join(dist, relative(src, file)).replace(/\.ts$/, '.js').replace(/\.cts$/, '.cjs');
    return !existsSync(out) || statSync(out).mtimeMs < statSync(file).mtimeMs;
  });
}

/** The renderer's inputs newer than its built page (all of them when it was never built). */
function staleRenderer(): string[] {
  const dir = join(ROOT, 'renderer');
  const inputs = [...sources(join(dir, 'src'), /\.(ts|svelte|css|html)$/), ...sources(join(dir, 'public'), /./), join(dir, 'index.html'), join(dir, 'vite.config.mjs')].filter((f) => existsSync(f));
  const page = join(dir, 'dist', 'index.html');
  if (!existsSync(page)) return inputs;
  const built = statSync(page).mtimeMs;
  return inputs.filter((f) => statSync(f).mtimeMs > built);
}

/**
 * The compiled files a bundle (dist/`folder`, made from `entry`) was made from that are newer than its oldest chunk
 * (or gone), by the rule proxy-core/bin/airlock.js applies before it runs the bundle; the entry when it was never
 * built. The bundling script counts as an input too.
 */
function staleBundle(folder: string, entry: string): string[] {
  const dist = join(ROOT, 'proxy-core', 'dist');
  const manifest = join(dist, folder, 'inputs.json');
  if (!existsSync(manifest)) return [join(dist, entry)];
  const { chunks, inputs } = JSON.parse(readFileSync(manifest, 'utf8')) as { chunks: string[]; inputs: string[] };
  const missing = chunks.map((c) => join(dist, c)).filter((c) => !existsSync(c));
  if (missing.length || chunks.length === 0) return [join(dist, entry)];
  const built = Math.min(...chunks.map((c) => statSync(join(dist, c)).mtimeMs));
  return [...inputs.map((f) => join(dist, f)), join(ROOT, 'build', 'bundles.mjs')].filter((f) => !existsSync(f) || statSync(f).mtimeMs > built);
}

/**
 * The native addon's sources newer than the addon built from them. None when it was never built: `npm install`
 * builds it where it can (proxy-core/native/install.mjs), and the tests that need it say when it is missing.
 */
function staleAddon(): string[] {
  const dir = join(ROOT, 'proxy-core', 'native');
  const addon = join(dir, 'build', 'Release', 'airlock_native.node');
  if (!existsSync(addon)) return [];
  const built = statSync(addon).mtimeMs;
  const own = sources(dir, /\.(c|h)$/).filter((f) => !f.startsWith(join(dir, 'build') + sep));
  return [...own, join(dir, 'binding.gyp')].filter((f) => statSync(f).mtimeMs > built);
}

/** `optional`: a build that may fail here (no compiler); what it left is then what the tests meet. */
const TARGETS: { name: string; stale: () => string[]; build: string[]; optional?: true }[] = [
  {
    name: 'proxy-core/native (the addon)',
    stale: staleAddon,
    build: [join(ROOT, 'proxy-core', 'native', 'install.mjs')],
    optional: true,
  },
  {
    name: 'proxy-core/dist',
    stale: () => staleCompiled(join(ROOT, 'proxy-core', 'src'), join(ROOT, 'proxy-core', 'dist')),
    build: [bin('typescript', 'bin', 'tsc'), '-p', join(ROOT, 'tsconfig.json')],
  },
  {
    name: 'proxy-core/dist/wrap-bundle and cli-bundle',
    stale: () => [...staleBundle('wrap-bundle', 'cli/wrap-entry.js'), ...staleBundle('cli-bundle', 'cli/main.js')],
    build: [join(ROOT, 'build', 'bundles.mjs')],
  },
  {
    name: 'renderer/dist',
    stale: staleRenderer,
    build: [bin('vite', 'bin', 'vite.js'), 'build', '--configLoader', 'native', join(ROOT, 'renderer')],
  },
  {
    name: 'electron/dist',
    stale: () => staleCompiled(join(ROOT, 'electron', 'src'), join(ROOT, 'electron', 'dist')),
    build: [bin('typescript', 'bin', 'tsc'), '-p', join(ROOT, 'electron', 'tsconfig.json')],
  },
];

export default function setup(): void {
  // in order: the bundles are made from proxy-core/dist, and the app's build reads proxy-core's declarations
  for (const target of TARGETS) {
    const before = target.stale();
    if (before.length === 0) continue;
    process.stderr.write(`${target.name} is older than ${before.length} source file(s) (${relative(ROOT, before[0]!)}…): building\n`);
    // vitest sets NODE_ENV=test, which would give vite a development build of Svelte: build what `npm run build` builds
    execFileSync(process.execPath, target.build, { stdio: 'inherit', cwd: ROOT, env: { ...process.env, NODE_ENV: 'production' } });
    const after = target.stale();
    if (after.length > 0 && !target.optional) throw new Error(`the build left ${target.name} older than ${after.length} source file(s): ${after.slice(0, 3).map((f) => relative(ROOT, f)).join(', ')}`);
  }
}
