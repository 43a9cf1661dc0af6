#!/usr/bin/env node
// The `airlock` command (node_modules/.bin/airlock, bin/airlock.js, the app's launcher): compiled JS, no
// TypeScript loader. It runs from the build's bundles (build/bundles.mjs) when they are at least as new as every
// file they were made from: `airlock wrap`, started once per MCP server as a client starts, from the bundle of
// its entry (a couple of files rather than 70); every other command from the CLI's bundle. main.js otherwise (the
// same commands, unbundled). Never an older bundle.
import { readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';

const DIST = new URL('../dist/', import.meta.url);
// dist/ as a plain path where Node gives this file's directory (20.11 on): a stat of a URL parses it first, about
// 1 ms over the ~90 files checked at every start of a wrapper; and the native addon reads plain paths only
const DIST_PATH = import.meta.dirname ? `${import.meta.dirname}/../dist` : null;
const inDist = DIST_PATH ? (rel) => `${DIST_PATH}/${rel}` : (rel) => new URL(rel, DIST);

/** Is the bundle in dist/`folder` at least as new as every compiled file it was made from? */
function fresh(folder) {
  try {
    const { chunks, inputs } = JSON.parse(readFileSync(inDist(`${folder}/inputs.json`), 'utf8'));
    if (!Array.isArray(chunks) || !Array.isArray(inputs) || chunks.length === 0 || inputs.length === 0) return false;
    const quick = quickTimes(chunks, inputs);
    if (quick) return quick.built >= quick.newest;
    let built = Infinity;
    for (const chunk of chunks) built = Math.min(built, statSync(inDist(chunk)).mtimeMs);
    for (const input of inputs) if (statSync(inDist(input)).mtimeMs > built) return false;
    return true;
  } catch {
    // not built, or a file gone: the unbundled entry
    return false;
  }
}

/**
 * The chunks' oldest time and the inputs' newest, from the native addon (proxy-core/native/mtime.c) in two calls
 * rather than a hundred fs.statSync (4 to 5 ms of a wrapper's start before it can spawn its server), or null:
 * no addon (not built), an addon built before it had the call, or a file it could not read (missing, or inside
 * the desktop app's archive, which only Electron's fs reads). Linux only: there the wrapper loads the addon
 * before its spawn anyway (its reaper), so this adds no load; elsewhere it would.
 */
function quickTimes(chunks, inputs) {
  if (process.platform !== 'linux' || !DIST_PATH) return null;
  let addon;
  try {
    addon = createRequire(import.meta.url)('../native/build/Release/airlock_native.node');
  } catch {
    return null;
  }
  if (typeof addon.mtimeRange !== 'function') return null;
  const built = addon.mtimeRange(DIST_PATH, chunks);
  const newest = built && addon.mtimeRange(DIST_PATH, inputs);
  return built && newest ? { built: built[0], newest: newest[1] } : null;
}

await import(
  process.argv[2] === 'wrap' && fresh('wrap-bundle') ? '../dist/wrap-bundle/wrap.js' : fresh('cli-bundle') ? '../dist/cli-bundle/main.js' : '../dist/cli/main.js'
);
