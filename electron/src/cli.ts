/**
 * `airlock` (the CLI, the wrapper, the broker) run by the app's own runtime: Electron's binary is plain Node
 * when ELECTRON_RUN_AS_NODE=1 is set at its start. The packaged `airlock` launcher and the app's broker both
 * start this file. The variable is taken out of the environment first, so nothing the CLI starts inherits it
 * (a wrapped MCP server, a check-up's server): an Electron app among them would otherwise start as Node.
 */
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';

delete process.env.ELECTRON_RUN_AS_NODE;
const core = createRequire(import.meta.url).resolve('@airlock/proxy-core/package.json');
await import(pathToFileURL(join(dirname(core), 'bin', 'airlock.js')).href);
