/**
 * `airlock wrap`'s own entry: what bin/airlock.js starts for `wrap` when the build's bundle of this file is
 * there and newer than everything it was made from (build/bundles.mjs); main.ts otherwise. The same
 * command either way (wrap-main.ts), ended the same way (exit.ts).
 */
import { exitWith } from './exit.js';
import { wrapMain } from './wrap-main.js';

exitWith(wrapMain(process.argv.slice(3)));
