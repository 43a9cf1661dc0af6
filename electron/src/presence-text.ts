/** What the app says about presence proofs (the tray, its tooltip): pure, so the words are tested without a tray. */

/**
 * Said when the app attached to a broker it did not start: that broker never got the app's key, so nothing the
 * app sees (a click, Touch ID) can count as you. The ways that still do.
 */
export const NO_APP_PROOFS =
  "this app did not start Airlock's broker, so it cannot prove you are here: approve in the browser UI with your passkey, or with `airlock approve` in a terminal";

/** The tray's line while a proof holds: "Approvals hold for 4 more minutes". */
export function leaseLine(until: number, now: number): string | null {
  const left = until - now;
  if (left <= 0) return null;
  const minutes = Math.ceil(left / 60_000);
  return `Approvals hold for ${minutes} more minute${minutes === 1 ? '' : 's'} (until the screen locks)`;
}

/** The tray's tooltip with the broker's standing warning under it (the lease is a line of the menu). */
export function withPresence(tooltip: string, warning: string | null): string {
  return warning ? `${tooltip}\nWARNING: ${warning}` : tooltip;
}
