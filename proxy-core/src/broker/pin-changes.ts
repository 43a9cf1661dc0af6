/**
 * How a tool's definition differs from its pin, as a ticket, `pins list` and the journal show it: the parts that
 * changed, their texts, and a unified diff, worked out once per pair of fingerprints (a diff per held call would
 * be wasted work).
 */
import { FILE_HEADERS_ONLY, formatPatch, structuredPatch } from 'diff';
import { changedParts } from '../classify/definition.js';
import type { PinChange } from '../protocol/api.js';
import type { Parts } from './pin-texts.js';

/** The diff a ticket or `pins list` shows, and the part of it an event keeps. */
const DIFF_LIMIT = 32 * 1024;
export const EVENT_DIFF_LIMIT = 4 * 1024;
const DIFF_TIMEOUT_MS = 50;
const CHANGE_CACHE = 64;

export class PinChanges {
  /** By pinned and current fingerprint. */
  private readonly changes = new Map<string, PinChange>();

  /** What differs between a pinned definition and another: the parts, their texts, and a unified diff. */
  of(pinned: string, before: Parts, current: string, after: Parts): PinChange {
    const key = `${pinned}>${current}`;
    const known = this.changes.get(key);
    if (known) return known;
    const fields = changedParts(before, after);
    const was: Record<string, string> = {};
    const now: Record<string, string> = {};
    const patches: string[] = [];
    for (const field of fields) {
      const a = shown(before[field]);
      const b = shown(after[field]);
      if (a !== undefined) was[field] = a;
      if (b !== undefined) now[field] = b;
      patches.push(unifiedDiff(field, a, b));
    }
    const change: PinChange = { fields, before: was, after: now, pinned, current, diff: cut(patches.join(''), DIFF_LIMIT) };
    if (this.changes.size >= CHANGE_CACHE) this.changes.delete(this.changes.keys().next().value!);
    this.changes.set(key, change);
    return change;
  }
}

/** A part's text as shown: marked when it was cut (the hash covers what is not shown). */
function shown(part: Parts[keyof Parts]): string | undefined {
  if (!part) return undefined;
  return part.cut ? `${part.text}\n[… cut here: the rest is not shown]` : part.text;
}

function unifiedDiff(field: string, before: string | undefined, after: string | undefined): string {
  const patch = structuredPatch(
    before === undefined ? `${field} (absent when pinned)` : `${field} (pinned)`,
    after === undefined ? `${field} (absent now)` : `${field} (now)`,
    before === undefined ? '' : `${before}\n`,
    after === undefined ? '' : `${after}\n`,
    undefined,
    undefined,
    { context: 3, timeout: DIFF_TIMEOUT_MS },
  );
  if (patch) return formatPatch(patch, FILE_HEADERS_ONLY);
  // too different to compare line by line in time: shown as what it is, one text replaced by another
  const lines = (text: string | undefined, sign: string) => (text === undefined ? [] : text.split('\n').map((l) => `${sign}${l}`));
  return [`--- ${field} (pinned)`, `+++ ${field} (now)`, ...lines(before, '-'), ...lines(after, '+'), ''].join('\n');
}

export function cut(text: string, limit: number): string {
  if (text.length <= limit) return text;
  const end = text.lastIndexOf('\n', limit);
  return `${text.slice(0, end > 0 ? end : limit)}\n[… diff cut]\n`;
}
