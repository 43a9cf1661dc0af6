#!/usr/bin/env node
// The CLI's entries bundled, by `npm run build` after tsc: Node loads ES modules one file at a time (read, parse,
// link), so a process that loads a few files rather than hundreds is ready sooner.
// - wrap-bundle/: `airlock wrap`'s entry (dist/cli/wrap-entry.js). A wrapper is started once per MCP server as the
//   client starts, and answers its first tools/list sooner. The relay's modules stay in a chunk of their own,
//   loaded after the server is spawned (cli/commands/wrap.ts). Packages from node_modules are imported as before.
// - cli-bundle/: every other command (dist/cli/main.js, each command a chunk of its own, loaded as it is now).
//   zod is bundled too, tree-shaken: its package loads every locale it has (some 90 ms of a command's start).
//   `airlock status` went from 324 to 226 ms, the daemon's start to "broker running" from 559 to 389 ms.
//
// Next to each bundle's chunks, inputs.json lists the chunks and every compiled file they were made from
// (dist-relative). proxy-core/bin/airlock.js starts a bundle only when every chunk is at least as new as every
// input, and dist/cli/main.js otherwise: a dist/ recompiled by tsc alone is never run from an older bundle.
// Both bundles sit one folder below dist/, as the compiled files of cli/ do: the paths the CLI finds relative to
// import.meta.url (cli/install-paths.ts, util/native.ts) hold in either.
import { rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { rolldown } from 'rolldown';

const DIST = join(dirname(fileURLToPath(import.meta.url)), '..', 'proxy-core', 'dist');
const posix = (p) => p.split(sep).join('/');
/** node: built-ins and packages are resolved at run time, as from the compiled files. */
const isPackage = (id) => !id.startsWith('.') && !id.startsWith('/') && !/^[A-Za-z]:[\\/]/.test(id);

const BUNDLES = [
  { folder: 'wrap-bundle', input: { wrap: join(DIST, 'cli', 'wrap-entry.js') }, external: isPackage },
  { folder: 'cli-bundle', input: { main: join(DIST, 'cli', 'main.js') }, external: (id) => isPackage(id) && !/^zod(\/|$)/.test(id) },
];

for (const b of BUNDLES) {
  const out = join(DIST, b.folder);
  rmSync(out, { recursive: true, force: true });
  const bundle = await rolldown({
    input: b.input,
    platform: 'node',
    external: b.external,
    logLevel: 'warn',
    // the daemon's UI host is imported both ways (statically by the daemon's command): nothing to move
    onLog: (level, log, handler) => (log.code === 'INEFFECTIVE_DYNAMIC_IMPORT' ? undefined : handler(level, log)),
  });
  // without comments: about 30% less text to parse (the compiled files are there to read). In ASCII: one character
  // past U+00FF in a chunk (a dash, an ellipsis in a message) makes V8 hold that chunk's whole source as a two-byte
  // string for the process's life (365 KB rather than 183 for run-wrapper.js); escaped, it stays one byte.
  const { output } = await bundle.write({ dir: out, format: 'esm', entryFileNames: '[name].js', chunkFileNames: '[name].js', comments: false, charset: 'ascii' });
  await bundle.close();
  const chunks = output.filter((o) => o.type === 'chunk');
  const inputs = new Set(chunks.flatMap((c) => c.moduleIds).filter((id) => id.startsWith(DIST + sep)).map((id) => posix(relative(DIST, id))));
  writeFileSync(join(out, 'inputs.json'), JSON.stringify({ chunks: chunks.map((c) => `${b.folder}/${c.fileName}`), inputs: [...inputs].sort() }, null, 1) + '\n');
  process.stdout.write(`${b.folder}: ${chunks.length} chunks from ${inputs.size} modules (${posix(relative(process.cwd(), out))})\n`);
}
