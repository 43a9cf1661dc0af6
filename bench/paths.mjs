// Where the bench finds what it runs: the checkout, the `airlock` command, the plain byte relay, and the servers
// it measures through them.
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { WRAPPER_NODE_FLAGS } from '../proxy-core/dist/wrap/v8-tuning.js';

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
export const CLI = join(ROOT, 'bin', 'airlock.js');
/** Node's args for a wrapper as a client config starts it (cli/launcher.ts): the wrapper's own flags, the script, `wrap`. */
export const WRAP = [...WRAPPER_NODE_FLAGS, CLI, 'wrap'];
export { WRAPPER_NODE_FLAGS };
export const RELAY = join(ROOT, 'bench', 'byte-relay.mjs');
export const FIXTURE = join(ROOT, 'test', 'fixtures', 'servers', 'fixture-server.mjs');
export const EVERYTHING = join(ROOT, 'node_modules', '@modelcontextprotocol', 'server-everything', 'dist', 'index.js');
