/**
 * Undo: one journaled call undone (its files put back from their snapshots, or its declared inverse called),
 * a wrapper session rolled back, declared inverses, and the wrapper's prepare before a file tool's call. The
 * shapes are undo-api.ts's.
 */
import { method, QUICK_MS } from '../method.js';
import { UserMethod, WrapperMethod } from '../names.js';
import { undoMethods as shapes } from '../undo-api.js';

/** An undo may call a declared inverse, which may be held as a ticket first, then wait for the server. */
const SERVER_MS = 60_000;
const undoWait = { ticket: (ticketMs: number) => ticketMs + SERVER_MS } as const;

export const undo = method({ name: UserMethod.undo, role: 'user', rights: 'loosen', ...shapes.undo, wait: undoWait });
export const undoLast = method({ name: UserMethod.undoLast, role: 'user', rights: 'loosen', ...shapes.undoLast, wait: undoWait });
/** Undo every call of a wrapper session that can be, newest first; one that fails does not stop the rest. */
export const rollback = method({ name: UserMethod.rollback, role: 'user', rights: 'loosen', ...shapes.rollback, wait: { ticket: (ticketMs) => Math.max(600_000, 10 * (ticketMs + SERVER_MS)) } });
export const inversesList = method({ name: UserMethod.inversesList, role: 'user', rights: 'read', ...shapes.inversesList, wait: QUICK_MS });
export const inversesSet = method({ name: UserMethod.inversesSet, role: 'user', rights: 'loosen', ...shapes.inversesSet, wait: QUICK_MS });
export const inversesRemove = method({ name: UserMethod.inversesRemove, role: 'user', rights: 'loosen', ...shapes.inversesRemove, wait: QUICK_MS });
export const prepare = method({ name: WrapperMethod.prepare, role: 'wrapper', rights: 'report', ...shapes.prepare, wait: 10_000 });

export const undoMethodList = [undo, undoLast, rollback, inversesList, inversesSet, inversesRemove, prepare] as const;
