/**
 * Pinned tool definitions in words: which parts of a definition changed, a pin's state, and whether an event
 * is about a pin. Pure.
 */
import type { BrokerEvent, PinChange, PinInfo } from '@airlock/proxy-core/protocol/api';

const PARTS: Readonly<Record<string, string>> = {
  title: 'title',
  description: 'description',
  inputSchema: 'input schema',
  outputSchema: 'output schema',
  annotations: 'annotations',
  _meta: 'metadata (_meta)',
  icons: 'icons',
  execution: 'execution',
  other: 'other members',
};

/** A part of a definition in words ("input schema"); an unknown one as it is. */
export function partName(field: string): string {
  return PARTS[field] ?? field;
}

/** "description and input schema". */
export function partsText(fields: readonly string[]): string {
  const names = fields.map(partName);
  if (names.length <= 1) return names[0] ?? 'nothing';
  return `${names.slice(0, -1).join(', ')} and ${names[names.length - 1]}`;
}

/** The first characters of a fingerprint, as `airlock pins list` shows them. */
export function shortFingerprint(fp: string): string {
  return fp.slice(0, 12);
}

/** What a pin's state means for the person. */
export function pinStatusText(pin: PinInfo): string {
  switch (pin.status) {
    case 'pinned':
      return 'Pinned: calls are judged against this definition.';
    case 'changed':
      return `Changed since it was pinned (${partsText(pin.change?.fields ?? [])}): every call asks until you accept the new definition.`;
    case 'removed':
      return 'No longer listed by the server; its pin is kept in case it comes back.';
    default:
      return String(pin.status);
  }
}

/** The parts of a change, each as pinned and as listed now, in the order the broker named them. */
export function changeParts(change: PinChange): { field: string; before: string; after: string }[] {
  return change.fields.map((field) => ({ field, before: change.before[field] ?? '(absent)', after: change.after[field] ?? '(absent)' }));
}

const PIN_EVENTS = new Set(['tool-added', 'tool-removed', 'tool-changed', 'pin-accepted']);

/** Whether an event changes the pins of this server. */
export function isPinEvent(e: Pick<BrokerEvent, 'type' | 'server'>, server: string): boolean {
  return PIN_EVENTS.has(e.type) && e.server === server;
}

/** Whether an event says this definition of this tool was accepted (from here, another window, or the CLI). */
export function acceptedBy(e: BrokerEvent, server: string, tool: string, fingerprint: string): boolean {
  if (e.type !== 'pin-accepted' || e.server !== server || e.tool !== tool) return false;
  const d = e.detail as { fingerprint?: unknown } | null;
  return typeof d === 'object' && d !== null && d.fingerprint === fingerprint;
}

/** Pins by tool name, and those of tools the catalog no longer lists. */
export function pinsByTool(pins: readonly PinInfo[], listed: readonly string[]): { byTool: Map<string, PinInfo>; unlisted: PinInfo[] } {
  const names = new Set(listed);
  const byTool = new Map<string, PinInfo>();
  const unlisted: PinInfo[] = [];
  for (const p of pins) {
    if (names.has(p.tool)) byTool.set(p.tool, p);
    else unlisted.push(p);
  }
  return { byTool, unlisted };
}
