/** Rows for the Activity tests: a live call's summary and a history item, an allowed write_file by default. */
import type { HistoryItem } from '@airlock/proxy-core/protocol/api';
import type { CallSummary } from '@airlock/proxy-core/protocol/events';

export const summary = (id: string, over: Partial<CallSummary> = {}): CallSummary => ({
  id,
  client: 'cursor',
  server: 'fs',
  tool: 'write_file',
  class: 'destructive',
  decision: 'allow',
  decidedBy: 'user',
  outcome: 'ok',
  startedAt: 1000,
  ...over,
});

export const item = (id: string, seq: number, over: Partial<HistoryItem> = {}): HistoryItem => ({
  ...summary(id),
  kind: 'call',
  seq,
  arguments: '{"path":"/tmp/x"}',
  argsTruncated: false,
  reasons: [],
  detail: '',
  ...over,
});
