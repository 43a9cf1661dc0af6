/**
 * Keep one query's answer current without polling: run it now, and again after each event that can change
 * it. Never two runs at once; events that arrive during a run cause exactly one more.
 */
import type { BrokerEvent } from '@airlock/proxy-core/protocol/api';

export interface EventSourceLike {
  on(listener: (event: BrokerEvent) => void): () => void;
}

export function reloadOn(source: EventSourceLike, relevant: (e: BrokerEvent) => boolean, load: () => Promise<void>): () => void {
  let running = false;
  let again = false;
  let stopped = false;
  const run = async (): Promise<void> => {
    if (running) {
      again = true;
      return;
    }
    running = true;
    try {
      do {
        again = false;
        await load().catch(() => undefined);
      } while (again && !stopped);
    } finally {
      running = false;
    }
  };
  void run();
  const off = source.on((e) => {
    if (!stopped && relevant(e)) void run();
  });
  return () => {
    stopped = true;
    off();
  };
}

/** A predicate for `reloadOn`: any of these event types. */
export function ofType(...types: string[]): (e: BrokerEvent) => boolean {
  return (e) => types.includes(e.type);
}
