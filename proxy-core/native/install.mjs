#!/usr/bin/env node
// Builds Airlock's optional native addon (binding.gyp) with node-gyp, on Linux and macOS. It is optional on
// purpose: without a compiler (or Node's headers) this prints why and exits 0; the wrapper then finds a server's
// descendants through /proc, and the broker knows no socket peer, so the presence proofs that need one are
// refused. Run by `npm install` (the root package's prepare script).
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const note = (msg) => process.stderr.write(`airlock: native addon: ${msg}\n`);
const without = 'the wrapper will find descendants through /proc only, and no socket peer will be known';

if (process.platform !== 'linux' && process.platform !== 'darwin') {
  note(`not built on ${process.platform} (Linux and macOS only)`);
  process.exit(0);
}
// npm names its own node-gyp for lifecycle scripts; otherwise the one npm ships beside Node
const prefix = dirname(dirname(process.execPath));
const candidates = [process.env.npm_config_node_gyp, join(prefix, 'lib', 'node_modules', 'npm', 'node_modules', 'node-gyp', 'bin', 'node-gyp.js')];
const nodeGyp = candidates.find((p) => p && existsSync(p));
if (!nodeGyp) {
  note(`node-gyp not found; ${without}`);
  process.exit(0);
}
// Node's own headers when they are installed beside it (no download); else node-gyp fetches them
const args = [nodeGyp, 'rebuild'];
if (existsSync(join(prefix, 'include', 'node', 'node_api.h'))) args.push(`--nodedir=${prefix}`);
const built = spawnSync(process.execPath, args, { cwd: here, stdio: ['ignore', 'ignore', 'pipe'], encoding: 'utf8' });
if (built.status !== 0) {
  const tail = (built.stderr ?? '').trim().split('\n').slice(-3).join(' | ');
  note(`build failed (${tail || built.error?.message || `exit ${built.status}`}); ${without}`);
}
process.exit(0);
