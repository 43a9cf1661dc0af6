#!/usr/bin/env node
// The `airlock` command (node_modules/.bin/airlock, bin/airlock.js, the app's launcher): compiled JS, no
// TypeScript loader. `airlock wrap` is started once per MCP server as a client starts: it runs from the build's
// bundle of its entry (build/wrap-bundle.mjs), a couple of files rather than 70, when that bundle is at least as
// new as every file it was made from; main.js otherwise (the same command, unbundled). Never an older bundle.
import { readFileSync, statSync } from 'node:fs';

const DIST = new URL('../dist/', import.meta.url);
// a file of dist/ by a plain path where Node gives this file's directory (20.11 on): a stat of a URL parses it
// first, about 1 ms over the ~90 files checked at every start of a wrapper
const inDist = import.meta.dirname ? (rel) => `${import.meta.dirname}/../dist/${rel}` : (rel) => new URL(rel, DIST);

function freshWrapBundle() {
  try {
    const { chunks, inputs } = JSON.parse(readFileSync(inDist('wrap-bundle/inputs.json'), 'utf8'));
    if (!Array.isArray(chunks) || !Array.isArray(inputs) || chunks.length === 0 || inputs.length === 0) return false;
    let built = Infinity;
    for (const chunk of chunks) built = Math.min(built, statSync(inDist(chunk)).mtimeMs);
    for (const input of inputs) if (statSync(inDist(input)).mtimeMs > built) return false;
    return true;
  } catch {
    // not built, or a file gone: the unbundled entry
    return false;
  }
}

await import(process.argv[2] === 'wrap' && freshWrapBundle() ? '../dist/wrap-bundle/wrap.js' : '../dist/cli/main.js');
