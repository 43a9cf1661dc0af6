/** A call's arguments by their hash: equal arguments hash equally whatever their key order (util/canonical-json.ts). */
import { createHash } from 'node:crypto';
import { canonicalJson } from '../util/canonical-json.js';

export function argumentsHash(args: unknown): string {
  return createHash('sha256').update(canonicalJson(args ?? {})).digest('hex');
}
