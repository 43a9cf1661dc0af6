/**
 * Where this installation's own files are, found from this module's place: one folder below src/ or dist/ (cli/),
 * and in the CLI's bundle (dist/cli-bundle/, build/bundles.mjs) one folder below dist/ as well. The CLI's modules
 * deeper down ask here rather than climb from their own place, which a bundle moves.
 */
import { fileURLToPath } from 'node:url';

/** The launcher, bin/airlock.js, at the checkout's (or the package's) root. */
export function airlockBin(): string {
  return fileURLToPath(new URL('../../../bin/airlock.js', import.meta.url));
}

/** The built renderer, renderer/dist, that `airlock daemon --ui` serves. */
export function rendererDist(): string {
  return fileURLToPath(new URL('../../../renderer/dist', import.meta.url));
}
