/**
 * An undo plan as read back from the database: the file on disk is the user's (and so the agent's) to edit, so a
 * plan is used only if it has the shape undo's code reads; anything else is no plan at all (the record cannot be
 * undone, and says so), never a broker that fails to start or an undo that throws half-way. Checked by hand, not
 * with a schema library: records are read several times per snapshotted call.
 */
import { isObject } from '../../jsonrpc/messages.js';

const isNumber = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);
const optional = (v: unknown, check: (v: unknown) => boolean): boolean => v === undefined || check(v);
const strings = (v: unknown): boolean => Array.isArray(v) && v.every((s) => typeof s === 'string');

/** A FileState (files.ts). */
function isFileState(v: unknown): boolean {
  if (!isObject(v)) return false;
  switch (v.type) {
    case 'absent':
      return optional(v.missing, strings);
    case 'file':
      return typeof v.sha256 === 'string' && isNumber(v.size) && isNumber(v.mode) && isNumber(v.mtimeMs);
    case 'dir':
      return isNumber(v.mode);
    case 'other':
      return typeof v.what === 'string';
    case 'unknown':
      return typeof v.why === 'string';
    default:
      return false;
  }
}

function isHeld(v: unknown): boolean {
  return isObject(v) && typeof v.name === 'string' && isNumber(v.dev) && isNumber(v.ino) && isNumber(v.size) && isNumber(v.mtimeMs);
}

/** A PathEntry (records.ts). */
function isPathEntry(v: unknown): boolean {
  return (
    isObject(v) &&
    typeof v.arg === 'string' &&
    typeof v.path === 'string' &&
    isFileState(v.before) &&
    optional(v.after, isFileState) &&
    optional(v.held, isHeld) &&
    optional(v.dirs, strings) &&
    optional(v.dirsAfter, strings) &&
    optional(v.raw, (r) => typeof r === 'string')
  );
}

/** Is `plan` (parsed from the database) an UndoPlan (records.ts) undo can use? */
export function isUsablePlan(plan: unknown): boolean {
  if (!isObject(plan)) return false;
  if (plan.kind === 'snapshot') return Array.isArray(plan.paths) && plan.paths.every(isPathEntry);
  if (plan.kind === 'inverse') return typeof plan.inverse === 'string' && isObject(plan.arguments) && typeof plan.spec === 'string' && optional(plan.command, strings);
  return false;
}
