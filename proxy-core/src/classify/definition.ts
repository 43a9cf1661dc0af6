/**
 * A tool's definition as Airlock pins it: the fingerprint of everything the server declares about the tool
 * (sha256 of the canonical JSON of the whole entry: name, title, description, input and output schemas,
 * annotations, `_meta`, icons, execution, and any member a later revision adds), and each of those parts with
 * its own hash and a text cut for display, so a change can be shown and not only detected. Nothing the server
 * sends is outside the pin: a client may hand any member to the model or act on it (`execution` says whether a
 * call runs as a task), so a member left out would be one the server could change freely.
 *
 * Computed once per listing by the wrapper (never per call) and sent to the broker with its catalog; the
 * broker keeps the first one it sees per server and tool (broker/pins.ts), and a later one that differs holds
 * the tool until the user accepts it. Light on purpose: the wrapper loads it.
 *
 * Hostile listings are expected: any nesting depth JSON.parse accepts is hashed without recursion, and the
 * display texts are bounded whatever the size of the definition.
 */
import * as crypto from 'node:crypto';
import { canonicalJson } from '../util/canonical-json.js';

/**
 * The parts of a definition, besides its name (the key it is pinned under). `other` holds every member not named
 * here, as one object: what a later revision of the protocol (or a server of its own accord) adds is pinned too.
 */
export const DEFINITION_PARTS = ['title', 'description', 'inputSchema', 'outputSchema', 'annotations', '_meta', 'icons', 'execution', 'other'] as const;
export type DefinitionPart = (typeof DEFINITION_PARTS)[number];
/** The parts pinned before `_meta`, icons, execution and other members were: a pin stored without them compares on these. */
export const FIRST_DEFINITION_PARTS: readonly DefinitionPart[] = ['title', 'description', 'inputSchema', 'outputSchema', 'annotations'];
const NAMED_MEMBERS = new Set<string>(['name', ...DEFINITION_PARTS.filter((p) => p !== 'other')]);

export interface DefinitionPartView {
  /** sha256 of the part's canonical JSON: two parts are the same exactly when these are. */
  sha256: string;
  /** The part for a person: a string as it is, anything else as indented JSON with sorted keys; cut at its limit. */
  text: string;
  /** The text was cut (the hash still covers the whole part). */
  cut?: true;
}

export interface ToolDefinition {
  /** sha256 of the canonical JSON of the whole definition. */
  fingerprint: string;
  /** The parts the server declared (an absent part has no entry). */
  parts: Partial<Record<DefinitionPart, DefinitionPartView>>;
}

/** How much of each part's text is kept for display. */
export const PART_TEXT_LIMITS: Readonly<Record<DefinitionPart, number>> = {
  title: 512,
  description: 4096,
  inputSchema: 8192,
  outputSchema: 8192,
  annotations: 2048,
  _meta: 4096,
  icons: 2048,
  execution: 512,
  other: 4096,
};

const FINGERPRINT = /^[0-9a-f]{64}$/;

/** True for a string that can be a fingerprint (or a part's hash). */
export function isFingerprint(v: unknown): v is string {
  return typeof v === 'string' && FINGERPRINT.test(v);
}

/**
 * JSON text of a value: the native serializer when it can, the canonical one when the value is too deep for it.
 * The canonical text is marked by a leading NUL (no JSON text starts with one): it is the same for two member
 * orders, so what must tell them apart (classify/entry-flags.ts) knows not to rely on it.
 */
export function jsonText(value: unknown): string {
  try {
    return JSON.stringify(value) ?? 'null';
  } catch {
    return `\u0000${canonicalJson(value)}`;
  }
}

// one-shot hashing where Node has it (20.12 and later): a definition hashes several short texts
const oneShot = (crypto as { hash?: (algorithm: string, data: string, encoding: 'hex') => string }).hash;

function sha256(text: string): string {
  return oneShot ? oneShot('sha256', text, 'hex') : crypto.createHash('sha256').update(text).digest('hex');
}

/** A part's text for a person, cut at `limit`. */
function displayText(value: unknown, canonical: string, limit: number): { text: string; cut: boolean } {
  let text = typeof value === 'string' ? value : canonical;
  if (typeof value !== 'string' && canonical.length <= limit * 4) {
    // indented, for a readable line diff; a value too deep to indent stays on one line
    try {
      text = JSON.stringify(JSON.parse(canonical), null, 2);
    } catch {
      text = canonical;
    }
  }
  return text.length > limit ? { text: text.slice(0, limit), cut: true } : { text, cut: false };
}

/** The members of an entry that no named part covers, as one object; undefined when there are none. */
function otherMembers(entry: Record<string, unknown>): Record<string, unknown> | undefined {
  let other: Record<string, unknown> | undefined;
  for (const key of Object.keys(entry)) {
    if (NAMED_MEMBERS.has(key) || entry[key] === undefined) continue;
    // defineProperty: a member named "__proto__" is kept as data, like any other
    other ??= {};
    Object.defineProperty(other, key, { value: entry[key], enumerable: true, writable: true, configurable: true });
  }
  return other;
}

/** One part of one entry. */
function partOf(entry: Record<string, unknown>, part: DefinitionPart): unknown {
  return part === 'other' ? otherMembers(entry) : entry[part];
}

/**
 * The definition of the tool(s) listed under one name. Two entries with one name (unclassifiable anyway) are
 * pinned together: each part is then the list of the entries' values, and a change to either is a change.
 */
export function toolDefinition(name: string, entries: readonly Record<string, unknown>[]): ToolDefinition {
  return definitionOf(name, entries, true);
}

/**
 * The same definition with its parts by hash only (each text empty and marked cut): what a listing needs to
 * compare with a pin, without writing out texts for display. The fingerprint and every hash are the same as
 * toolDefinition's.
 */
export function definitionHashes(name: string, entries: readonly Record<string, unknown>[]): ToolDefinition {
  return definitionOf(name, entries, false);
}

function definitionOf(name: string, entries: readonly Record<string, unknown>[], withTexts: boolean): ToolDefinition {
  const one = entries.length === 1 ? entries[0]! : undefined;
  const parts: ToolDefinition['parts'] = {};
  const whole: string[] = [];
  const members: [string, string][] = [['name', JSON.stringify(name)]];
  for (const part of DEFINITION_PARTS) {
    const value = one ? partOf(one, part) : entries.some((e) => partOf(e, part) !== undefined) ? entries.map((e) => partOf(e, part) ?? null) : undefined;
    if (value === undefined) continue;
    const canonical = canonicalJson(value);
    members.push([part, canonical]);
    if (withTexts) {
      const shown = displayText(value, canonical, PART_TEXT_LIMITS[part]);
      parts[part] = { sha256: sha256(canonical), text: shown.text, ...(shown.cut ? { cut: true as const } : {}) };
    } else parts[part] = { sha256: sha256(canonical), text: '', cut: true };
  }
  // the canonical JSON of {name, title, …, other}: keys sorted
  members.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  for (const [key, text] of members) whole.push(`${JSON.stringify(key)}:${text}`);
  const body = `{${whole.join(',')}}`;
  return { fingerprint: sha256(entries.length === 1 ? body : `${entries.length}:${body}`), parts };
}

/**
 * The parts that differ between two definitions (a part present in one only differs too), in a fixed order;
 * among `among` only when given.
 */
export function changedParts(before: ToolDefinition['parts'], after: ToolDefinition['parts'], among: readonly DefinitionPart[] = DEFINITION_PARTS): DefinitionPart[] {
  return among.filter((p) => before[p]?.sha256 !== after[p]?.sha256);
}
