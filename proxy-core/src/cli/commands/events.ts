/**
 * `airlock events [--since SEQ] [--follow] [--json]`: the broker's event stream. With --follow it prints every
 * event after SEQ and then live ones as they happen, one per line, until interrupted; a reconnect with
 * `--since` the last seq printed misses nothing and repeats nothing.
 */
import type { BrokerEvent } from '../../protocol/api.js';
import { parse } from '../args.js';
import { call, connect, oneLine, print, printJson } from '../control.js';
import { CliError, UsageError } from '../errors.js';

export async function run(argv: string[]): Promise<number> {
  const { values } = parse(argv.slice(1), { json: { type: 'boolean' }, since: { type: 'string' }, follow: { type: 'boolean' }, limit: { type: 'string' } }, false);
  const since = values.since === undefined ? undefined : Number(values.since);
  if (since !== undefined && (!Number.isInteger(since) || since < 0)) throw new UsageError('--since takes a sequence number (0 or more)');
  const show = (e: BrokerEvent): void => {
    if (values.json) printJson(e, 0);
    else print(`${e.seq}\t${new Date(e.at).toISOString()}\t${e.type}\t${e.server ?? ''}\t${e.tool ?? ''}\t${oneLine(JSON.stringify(e.detail), 100)}`);
  };

  if (!values.follow) {
    const limit = values.limit === undefined ? 50 : Number(values.limit);
    if (!Number.isInteger(limit) || limit <= 0 || limit > 10_000) throw new UsageError('--limit takes a whole number from 1 to 10000');
    // oldest first, like --follow: the newest `limit`, or (with --since) the first `limit` after SEQ
    if (since === undefined) {
      for (const e of (await call('events', { limit })).events.reverse()) show(e);
      return 0;
    }
    const after: BrokerEvent[] = [];
    let before: number | undefined;
    for (;;) {
      const page = await call('events', { limit: 1000, before });
      after.push(...page.events.filter((e) => e.seq > since));
      if (page.nextCursor === null || page.events.some((e) => e.seq <= since)) break;
      before = page.nextCursor;
    }
    for (const e of after.reverse().slice(0, limit)) show(e);
    return 0;
  }

  const client = await connect();
  return new Promise<number>((resolve, reject) => {
    const stop = () => {
      client.close();
      resolve(0);
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
    client
      .follow(since ?? 0, {
        event: show,
        end: (reason) => {
          process.off('SIGINT', stop);
          process.off('SIGTERM', stop);
          reject(new CliError(`the event stream ended: ${reason}`));
        },
      })
      .catch((err: Error) => reject(new CliError(err.message)));
  });
}
