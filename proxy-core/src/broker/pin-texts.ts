/**
 * How a pin row stores a tool's definition: the parts a wrapper sent, read without trusting their shape (what
 * does not read as a definition is not pinned, texts are cut to their limits), and written with a mark that
 * tells rows pinned before definitions covered every part.
 */
import { DEFINITION_PARTS, isFingerprint, PART_TEXT_LIMITS, type ToolDefinition } from '../classify/definition.js';
import { isObject } from '../jsonrpc/messages.js';

export type Parts = ToolDefinition['parts'];

/** A definition as a wrapper sent it, or null when it does not read as one (not pinned, never thrown on). */
export function readDefinition(v: unknown): ToolDefinition | null {
  if (!isObject(v) || !isFingerprint(v.fingerprint) || !isObject(v.parts)) return null;
  const parts: Parts = {};
  for (const part of DEFINITION_PARTS) {
    const p = v.parts[part];
    if (p === undefined) continue;
    if (!isObject(p) || !isFingerprint(p.sha256) || typeof p.text !== 'string') return null;
    const limit = PART_TEXT_LIMITS[part];
    parts[part] = { sha256: p.sha256, text: p.text.slice(0, limit), ...(p.cut === true || p.text.length > limit ? { cut: true as const } : {}) };
  }
  return { fingerprint: v.fingerprint, parts };
}

/** Marks a stored definition as covering every part (DEFINITION_PARTS); one without it covers FIRST_DEFINITION_PARTS. */
const FULL_DEFINITION_MARK = '$parts';

/** A definition's parts as stored in a pin row. */
export function storedText(parts: Parts): string {
  return JSON.stringify({ [FULL_DEFINITION_MARK]: 'all', ...parts });
}

/** True for a stored definition written before pins covered `_meta`, icons, execution and other members. */
export function pinnedBeforeFullDefinitions(text: string): boolean {
  try {
    const v = JSON.parse(text) as unknown;
    return !(isObject(v) && v[FULL_DEFINITION_MARK] === 'all');
  } catch {
    return false;
  }
}

/** Stored parts (written by `report`); an unreadable row reads as no parts, so every part shows as changed. */
export function readParts(text: string): Parts {
  try {
    return readDefinition({ fingerprint: '0'.repeat(64), parts: JSON.parse(text) as unknown })?.parts ?? {};
  } catch {
    return {};
  }
}
