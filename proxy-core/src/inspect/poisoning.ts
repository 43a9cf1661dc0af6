/**
 * Tool poisoning, as `airlock inspect` reports it: the detectors are the classifier's own
 * (classify/hidden-text.ts), so a check-up and the wrapper's verdicts flag the same text.
 */
export { describeHits, type PoisonHit, type PoisonKind, printable, scanJson, scanText } from '../classify/hidden-text.js';
