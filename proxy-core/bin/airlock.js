#!/usr/bin/env node
// The `airlock` command (node_modules/.bin/airlock, bin/airlock.js, the app's launcher): compiled JS, no
// TypeScript loader. `airlock wrap` is started once per MCP server as a client starts: it runs from the build's
// bundle of its entry (build/wrap-bundle.mjs), a couple of files rather than 70, when that bundle is at least as
// new as every file it was made from; main.js otherwise (the same command, unbundled). Never an older bundle.
import { readFileSync, statSync } from 'node:fs';

const DIST = new URL('../dist/', import.meta.url);

function freshWrapBundle() {
  try {
    const { chunks, inputs } = JSON.parse(readFileSync(new URL('wrap-bundle/inputs.json', DIST), 'utf8'));
    if (!Array.isArray(chunks) || !Array.isArray(inputs) || chunks.length === 0 || inputs.length === 0) return false;
    let built = Infinity;
    for (const chunk of chunks) built = Math.min(built, statSync(new URL(chunk, DIST)).mtimeMs);
    for (const input of inputs) if (statSync(new URL(input, DIST)).mtimeMs > built) return false;
    return true;
  } catch {
    // not built, or a file gone: the unbundled entry
    return false;
  }
}

await import(process.argv[2] === 'wrap' && freshWrapBundle() ? '../dist/wrap-bundle/wrap.js' : '../dist/cli/main.js');
