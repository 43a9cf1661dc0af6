/** Canonical JSON (object keys sorted, recursively) so that equal arguments hash equally whatever their key order. */
import { createHash } from 'node:crypto';
import { canonicalJson } from '../util/canonical-json.js';

export { canonicalJson };

export function argumentsHash(args: unknown): string {
  return createHash('sha256').update(canonicalJson(args ?? {})).digest('hex');
}
