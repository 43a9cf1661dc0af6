/** The audit export as the broker runs it: its queue in the broker's database, its settings, its two feeds. */
import { settingOrFallback } from '../../protocol/settings.js';
import type { Store } from '../db/store.js';
import type { EventBus, RecordEvent } from '../events.js';
import { OtlpExporter } from './exporter.js';
import { OtlpQueue } from './queue.js';

/** Records the queue keeps while the collector is away (about 100-300 MB of mapped records at most). */
export const OTLP_QUEUE_MAX = 200_000;

export interface OtlpSetup {
  store: Store;
  bus: EventBus;
  record: RecordEvent;
  env: Record<string, string | undefined>;
  queueMax?: number;
  version: string;
}

export function startOtlp(o: OtlpSetup): OtlpExporter {
  const exporter = new OtlpExporter({
    queue: new OtlpQueue(o.store.db, o.queueMax ?? OTLP_QUEUE_MAX),
    endpoint: () => settingOrFallback('otlp-endpoint', o.store.getSetting('otlp-endpoint')),
    content: () => settingOrFallback('otlp-content', o.store.getSetting('otlp-content')) === 'on',
    env: o.env,
    record: o.record,
    origin: { service: 'airlock-broker', version: o.version },
  });
  // from now on (history before the start is in the journal, not news): every event as it is committed
  o.bus.subscribe(o.store.headSeq(), {
    send: (event) => {
      exporter.events([event]);
      return true;
    },
    ended: () => {},
  });
  return exporter;
}
