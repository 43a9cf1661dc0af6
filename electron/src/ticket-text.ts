/** How a ticket is put to the person outside the approval card: the style setting and the arguments as text. Pure. */
import type { Ticket } from '@airlock/proxy-core';

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
  return cut ? `${text.slice(0, max)}… (${t.argsBytes} bytes in all)` : text;
}
