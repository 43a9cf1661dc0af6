/** Sizes and timings that more than one part of Airlock must agree on, defined once. */
export const LIMITS = {
  /** A client, server or rule glob name. */
  name: 512,
  toolName: 1024,
  /** A user's reason, a rule's note, one classification reason. */
  reason: 2000,
  /** The detail of a journal entry. */
  detail: 4000,
  /** The most of a call's arguments a journal entry or a ticket keeps and shows (JSON text, UTF-16 units). */
  argsShown: 64 * 1024,
  /** The most of a call's result the journal keeps (JSON text, UTF-16 units). */
  resultShown: 64 * 1024,
  /**
   * Catalog reports of one wrapper connection the broker takes at once (each up to the frame limit); a wrapper
   * sends no more before one is answered, and the broker refuses more.
   */
  catalogReportsInFlight: 4,
  /** Finished calls one prepare may name (a wrapper names the rest in its next one; the journal reads any left over). */
  finishedPerPrepare: 64,
} as const;
