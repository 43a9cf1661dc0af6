/**
 * The broker's event stream, carried to the windows that subscribed. Each subscription gets a broker
 * connection of its own, so the broker itself replays from `since` and keeps the order (events after the last
 * one delivered, nothing twice); when the broker goes away the window is told it is reconnecting, and the
 * stream resumes after the last event it delivered once the broker is back.
 */
import type { BrokerClient, BrokerEvent, StreamState } from '@airlock/proxy-core';
import type { WebContents } from 'electron';
import type { BrokerLink } from './broker.js';
import { CHANNELS, MAX_STREAMS_PER_WINDOW } from './ipc-contract.js';
import { type Log, messageOf } from './log.js';

/** After the broker ended one stream (too slow a reader) while it still runs: try again after this long. */
const RESUME_MS = 1000;

class Stream {
  private client: BrokerClient | null = null;
  private connecting = false;
  private closed = false;
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly contents: WebContents,
    private readonly id: string,
    private lastSeq: number,
    private readonly broker: BrokerLink,
  ) {}

  async resume(): Promise<void> {
    if (this.closed || this.connecting || this.client) return;
    if (!this.broker.isConnected) return this.state({ state: 'reconnecting', reason: "Airlock's broker is not running" });
    this.connecting = true;
    try {
      const client = await this.broker.openClient();
      if (this.closed) return client.close();
      this.client = client;
      await client.follow(this.lastSeq, {
        event: (e) => this.deliver(e),
        end: (reason) => this.ended(client, reason),
      });
      if (this.client === client) this.state({ state: 'live' });
    } catch (err) {
      this.client?.close();
      this.client = null;
      this.state({ state: 'reconnecting', reason: messageOf(err) });
    } finally {
      this.connecting = false;
    }
  }

  close(): void {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.client?.close();
    this.client = null;
  }

  private deliver(e: BrokerEvent): void {
    if (this.closed || e.seq <= this.lastSeq) return;
    this.lastSeq = e.seq;
    if (!this.contents.isDestroyed()) this.contents.send(CHANNELS.event, this.id, e);
  }

  private ended(client: BrokerClient, reason: string): void {
    if (this.client !== client) return;
    this.client = null;
    client.close();
    if (this.closed) return;
    this.state({ state: 'reconnecting', reason });
    // the broker still runs (it ended this stream alone): try again soon; else the broker's return resumes it
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.resume();
    }, RESUME_MS);
  }

  private state(state: StreamState): void {
    if (!this.closed && !this.contents.isDestroyed()) this.contents.send(CHANNELS.state, this.id, state);
  }
}

export class Streams {
  private readonly byWindow = new Map<number, Map<string, Stream>>();

  constructor(private readonly deps: { broker: BrokerLink; log: Log }) {
    deps.broker.connected.on(() => {
      for (const streams of this.byWindow.values()) for (const s of streams.values()) void s.resume();
    });
  }

  /** Start a stream for one window; a refusal's reason, or null. */
  open(contents: WebContents, id: string, since: number): string | null {
    let streams = this.byWindow.get(contents.id);
    if (!streams) {
      const mine = new Map<string, Stream>();
      streams = mine;
      this.byWindow.set(contents.id, mine);
      const end = () => {
        for (const s of mine.values()) s.close();
        mine.clear();
      };
      contents.once('destroyed', () => {
        end();
        this.byWindow.delete(contents.id);
      });
      // a new page in the window (a reload): the old page's streams have no one to deliver to
      contents.on('did-navigate', end);
    }
    if (streams.has(id)) return `stream ${id} is already open`;
    if (streams.size >= MAX_STREAMS_PER_WINDOW) return `a window may hold ${MAX_STREAMS_PER_WINDOW} streams at once`;
    const stream = new Stream(contents, id, since, this.deps.broker);
    streams.set(id, stream);
    void stream.resume();
    return null;
  }

  close(contentsId: number, id: string): void {
    const streams = this.byWindow.get(contentsId);
    streams?.get(id)?.close();
    streams?.delete(id);
  }

  closeAll(): void {
    for (const streams of this.byWindow.values()) for (const s of streams.values()) s.close();
    this.byWindow.clear();
  }
}
