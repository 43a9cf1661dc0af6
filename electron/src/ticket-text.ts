/**
 * How a ticket is put to the person outside the approval card: the style setting, the arguments as text, and
 * any server's, client's or model's words made safe for a native label. Pure.
 */
import { spellOutHidden, type Ticket } from '@airlock/proxy-core';

/**
 * Text for a menu item, a message box or a notification. What the OS draws there cannot mark an escape the way
 * the card does, so characters that reorder or hide text (bidi controls, zero-width, tags) or that are controls
 * are written out as `\u{202E}`: a tool named to read backwards shows what it is.
 */
export const native = (text: string): string => spellOutHidden(text);

export type ApprovalStyle = 'popup' | 'dialog' | 'notification';
export const STYLE_SETTING = 'approval-style';

/** The setting's value as a style: anything missing or unknown is the popup. */
export function approvalStyle(value: string | null | undefined): ApprovalStyle {
  return value === 'dialog' || value === 'notification' ? value : 'popup';
}

/** The call's arguments as text for a message box or a notification, cut at `max` characters. */
export function argsText(t: Ticket, max: number): string {
  let text: string;
  try {
    text = typeof t.arguments === 'string' && t.argsTruncated ? t.arguments : JSON.stringify(t.arguments, null, 2) ?? 'none';
  } catch {
    text = String(t.arguments);
  }
  const cut = text.length > max || t.argsTruncated;
  return native(cut ? `${text.slice(0, max)}… (${t.argsBytes} bytes in all)` : text);
}
