// `node --import ./test/app/load-with-stand-in.mjs electron/dist/main.js`: runs the app's real built main
// entry under plain Node, with every `import … from 'electron'` resolved to the recording stand-in next to
// this file. The hooks run on Node's loader thread; the same file registers them from the main thread.
import { register } from 'node:module';
import { isMainThread } from 'node:worker_threads';

const STAND_IN = new URL('./electron-stand-in.mjs', import.meta.url).href;

if (isMainThread) register(import.meta.url);

/** @type {import('node:module').ResolveHook} */
export async function resolve(specifier, context, next) {
  if (specifier === 'electron') return { url: STAND_IN, shortCircuit: true };
  return next(specifier, context);
}
