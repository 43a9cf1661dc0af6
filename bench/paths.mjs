// Where the bench finds what it runs: the checkout, the `airlock` command, the plain byte relay, and the servers
// it measures through them.
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
export const CLI = join(ROOT, 'bin', 'airlock.js');
export const RELAY = join(ROOT, 'bench', 'byte-relay.mjs');
export const FIXTURE = join(ROOT, 'test', 'fixtures', 'servers', 'fixture-server.mjs');
export const EVERYTHING = join(ROOT, 'node_modules', '@modelcontextprotocol', 'server-everything', 'dist', 'index.js');
