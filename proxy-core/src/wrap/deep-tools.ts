/**
 * A listing with a tool nested past what Airlock reads. A server message nested deeper than MAX_NESTING is
 * refused whole (re-serialising, journaling or hashing it could overflow the stack), but one tool with a
 * pathological inputSchema must not take every other tool of the server with it: that tool alone is withheld.
 * The client is shown it under its own name with a description that says why and an empty schema; Airlock's
 * classifier reads the withheld mark (classify.ts) and judges it unclassifiable, so a call to it asks (unless a
 * rule of the person's says otherwise), with the reason on the card. The stand-in carries the sha256 of the
 * withheld entry (hashed without recursion), so the pin covers what is withheld: a server that changes it
 * later has its tool held like any changed definition.
 */
import { createHash } from 'node:crypto';
import { WITHHELD_META_KEY } from '../classify/classify.js';
import { canonicalJson } from '../util/canonical-json.js';
import { isObject } from '../jsonrpc/messages.js';
import { nestedDeeperThan } from '../jsonrpc/inbound.js';

/** A tool entry sits at level 4 of a listing answer: message ▸ result ▸ tools ▸ entry. */
const ENTRY_LEVEL = 4;

/**
 * The listing answer with every tool nested deeper than `max` (counted from the message) replaced by a withheld
 * stand-in, and the names withheld; null when the message is not a listing answer or is too deep elsewhere.
 */
export function withholdDeepTools(m: Record<string, unknown>, max: number): { message: Record<string, unknown>; withheld: string[] } | null {
  const result = m.result;
  if (!isObject(result) || !Array.isArray(result.tools)) return null;
  const withheld: string[] = [];
  const tools = result.tools.map((t: unknown) => {
    if (!nestedDeeperThan(t, max - ENTRY_LEVEL + 1)) return t;
    const name = isObject(t) && typeof t.name === 'string' ? t.name : '';
    withheld.push(name);
    return withheldTool(name, max, createHash('sha256').update(canonicalJson(t)).digest('hex'));
  });
  if (withheld.length === 0) return null;
  const message = { ...m, result: { ...result, tools } };
  // what is left must read: a result nested too deep outside its tools is still refused whole
  return nestedDeeperThan(message, max) ? null : { message, withheld };
}

function withheldTool(name: string, max: number, sha256: string): Record<string, unknown> {
  const reason = `its definition is nested deeper than ${max} levels, which Airlock does not read`;
  return {
    name,
    description: `Airlock withheld this tool's definition: ${reason}. Every call to it waits for your approval.`,
    inputSchema: { type: 'object' },
    _meta: { [WITHHELD_META_KEY]: reason, 'airlock/withheld-sha256': sha256 },
  };
}
