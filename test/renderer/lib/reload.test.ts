/** reloadOn: a page's data loaded now and once more per burst of the events that change it. */
import { describe, expect, test } from 'vitest';
import type { BrokerEvent } from '@airlock/proxy-core/protocol/api';
import { ofType, reloadOn } from '../../../renderer/src/lib/reload.js';

describe('reloadOn', () => {
  test('loads now, once more per burst of relevant events, never two at once', async () => {
    const listeners = new Set<(e: BrokerEvent) => void>();
    const source = { on: (l: (e: BrokerEvent) => void) => (listeners.add(l), () => listeners.delete(l)) };
    const emit = (type: string) => listeners.forEach((l) => l({ seq: 1, at: 0, type, server: null, tool: null, detail: {} }));
    let running = 0;
    let max = 0;
    let runs = 0;
    let release: () => void = () => undefined;
    const load = () =>
      new Promise<void>((resolve) => {
        runs++;
        running++;
        max = Math.max(max, running);
        release = () => {
          running--;
          resolve();
        };
      });
    const stop = reloadOn(source, ofType('rule-added'), load);
    expect(runs).toBe(1);
    emit('rule-added');
    emit('rule-added');
    emit('estop-on');
    release();
    await new Promise((r) => setTimeout(r, 0));
    expect(runs).toBe(2);
    release();
    await new Promise((r) => setTimeout(r, 0));
    expect(runs).toBe(2);
    expect(max).toBe(1);
    stop();
    emit('rule-added');
    expect(runs).toBe(2);
    expect(listeners.size).toBe(0);
  });
});
