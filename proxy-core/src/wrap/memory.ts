/**
 * The wrapper's memory: it should stay about the size of a plain byte relay, however many calls go through it.
 */
import { setFlagsFromString } from 'node:v8';

let done = false;

/**
 * V8 grows its young generation (up to 2 × 16 MB) once the bytes that lived through scavenges add up to its size,
 * which under a steady stream of calls they always do: the calls in flight and the journal entries waiting for
 * the broker's acknowledgement survive a scavenge or two. That is tens of megabytes of RSS bought for a little
 * less GC work, in a process that holds well under a megabyte per moment. The wrapper keeps it at its first
 * size: more, smaller scavenges, each as cheap as the live set is small. (The growth factor is read at each
 * growth, so setting it now takes effect; the heap's limits themselves cannot be changed after start. The sooner
 * it is set, the less the loading of modules has grown the young generation already.)
 *
 * What does live through two scavenges (journal entries waiting longest for the broker) goes to the old
 * generation, whose limit V8 sets to several times what was live at the last full collection: with a few
 * megabytes live, tens of megabytes of garbage. The wrapper lets it grow by half of what is live instead: a full
 * collection of so small a heap takes a few milliseconds.
 */
export function keepYoungGenerationSmall(): void {
  if (done) return;
  done = true;
  try {
    setFlagsFromString('--semi-space-growth-factor=1');
    setFlagsFromString('--heap-growing-percent=50');
  } catch {
    // a runtime without the flag only keeps its default
  }
}

