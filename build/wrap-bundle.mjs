#!/usr/bin/env node
// `airlock wrap`'s entry (proxy-core/dist/cli/wrap-entry.js) bundled, by `npm run build` after tsc: a wrapper is
// started once per MCP server as the client starts, and Node loads ES modules one file at a time (read, parse,
// link), so a wrapper that loads 2 files rather than 70 answers its first tools/list sooner. The relay's modules
// stay in a chunk of their own, loaded after the server is spawned (cli/commands/wrap.ts). Packages from
// node_modules are not bundled: they are imported as before.
//
// Next to the chunks, inputs.json lists the chunks and every compiled file they were made from (dist-relative).
// proxy-core/bin/airlock.js starts the bundle only when every chunk is at least as new as every input, and
// main.js otherwise: a dist/ recompiled by tsc alone is never run from an older bundle.
import { rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { rolldown } from 'rolldown';

const DIST = join(dirname(fileURLToPath(import.meta.url)), '..', 'proxy-core', 'dist');
// one folder below dist/, as each compiled file is: paths relative to import.meta.url (the native reaper's) hold
const OUT = join(DIST, 'wrap-bundle');
const posix = (p) => p.split(sep).join('/');

rmSync(OUT, { recursive: true, force: true });
const bundle = await rolldown({
  input: { wrap: join(DIST, 'cli', 'wrap-entry.js') },
  platform: 'node',
  // node: built-ins and packages: resolved at run time, as from the compiled files
  external: (id) => !id.startsWith('.') && !id.startsWith('/') && !/^[A-Za-z]:[\\/]/.test(id),
  logLevel: 'warn',
});
// without comments: the wrapper parses about 30% less text (the compiled files are there to read). In ASCII: one
// character past U+00FF in a chunk (a dash, an ellipsis in a message) makes V8 hold that chunk's whole source as a
// two-byte string for the process's life (365 KB rather than 183 for run-wrapper.js); escaped, it stays one byte.
const { output } = await bundle.write({ dir: OUT, format: 'esm', entryFileNames: '[name].js', chunkFileNames: '[name].js', comments: false, charset: 'ascii' });
await bundle.close();
const chunks = output.filter((o) => o.type === 'chunk');
const inputs = new Set(chunks.flatMap((c) => c.moduleIds).filter((id) => id.startsWith(DIST + sep)).map((id) => posix(relative(DIST, id))));
writeFileSync(join(OUT, 'inputs.json'), JSON.stringify({ chunks: chunks.map((c) => `wrap-bundle/${c.fileName}`), inputs: [...inputs].sort() }, null, 1) + '\n');
process.stdout.write(`wrap bundle: ${chunks.length} chunks from ${inputs.size} modules (${posix(relative(process.cwd(), OUT))})\n`);
