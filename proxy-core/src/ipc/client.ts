/**
 * A front end's typed line to the broker (the CLI's and the app's): each call is checked against the protocol's
 * schema before it is sent and its answer after it arrives, so both ends agree on shapes by construction, not
 * by convention, and waits as long as the method's declaration says (protocol/method.ts).
 */
import { type Channel, IpcError } from './channel.js';
import { connectBroker } from './connect.js';
import type { BrokerEndpoint } from './paths.js';
import { isObject } from '../jsonrpc/messages.js';
import { type BrokerEvent, BrokerEventSchema, type Proof, type ParamsOf, type ResultOf, userApi, type UserMethodKey, waitMs, waitsOnTicket } from '../protocol/api.js';
import { BrokerNote } from '../protocol/names.js';

/** How long a call with a proof may take: a person typing a password into polkit's prompt. */
export const PROOF_WAIT_MS = 130_000;

export interface FollowHandlers {
  event(event: BrokerEvent): void;
  /** The broker ended the subscription (too slow, stopping) or the connection closed. */
  end(reason: string): void;
}

export class BrokerClient {
  private followers: FollowHandlers[] = [];

  private constructor(private readonly channel: Channel) {
    channel.setHandlers({
      notify: (method, params) => {
        if (method !== BrokerNote.event) return;
        if (isObject(params) && typeof params.ended === 'string') {
          for (const f of this.followers) f.end(params.ended);
          return;
        }
        const parsed = BrokerEventSchema.safeParse(params);
        if (parsed.success) for (const f of this.followers) f.event(parsed.data);
      },
      close: (err) => {
        for (const f of this.followers) f.end(err ? `connection lost: ${err.message}` : 'connection closed');
      },
    });
  }

  static async connect(opts: { dir: string; endpoint?: BrokerEndpoint; role?: 'cli' | 'ui' | 'app'; timeoutMs?: number }): Promise<BrokerClient> {
    const channel = await connectBroker({
      dir: opts.dir,
      role: opts.role ?? 'cli',
      ...(opts.endpoint ? { endpoint: opts.endpoint } : {}),
      ...(opts.timeoutMs !== undefined ? { timeoutMs: opts.timeoutMs } : {}),
    });
    return new BrokerClient(channel);
  }

  /**
   * Call a method; params are checked before sending, the answer after receiving. It waits as long as the
   * method's declaration says (asking the broker's ticket timeout first where that counts), or `timeoutMs`.
   */
  call<M extends UserMethodKey>(method: M, params: ParamsOf<M>, timeoutMs?: number): Promise<ResultOf<M>> {
    return this.send(method, params, timeoutMs, undefined);
  }

  /**
   * Call a loosening method with a presence proof (protocol/presence.ts): the proof rides as the params'
   * `presence`. It waits at least as long as a person may take to answer (polkit asks for a password).
   */
  callWithProof<M extends UserMethodKey>(method: M, params: ParamsOf<M>, proof: Proof): Promise<ResultOf<M>> {
    return this.send(method, params, undefined, proof);
  }

  private async send<M extends UserMethodKey>(method: M, params: ParamsOf<M>, timeoutMs: number | undefined, proof: Proof | undefined): Promise<ResultOf<M>> {
    const spec = userApi[method];
    const checked = spec.params.safeParse(params);
    if (!checked.success) throw new IpcError('bad-request', `${method}: ${checked.error.issues[0]?.message ?? 'invalid parameters'}`);
    const ticketMs = timeoutMs === undefined && waitsOnTicket(spec) ? (await this.call('status', {})).ticketTimeoutSeconds * 1000 : 0;
    const declared = waitMs(spec, checked.data, ticketMs);
    const wait = timeoutMs ?? (proof ? Math.max(PROOF_WAIT_MS, declared) : declared);
    const answer = await this.channel.request(method, proof ? { ...(checked.data as object), presence: proof } : checked.data, wait);
    const result = spec.result.safeParse(answer);
    if (!result.success) throw new IpcError('bad-answer', `the broker's answer to ${method} does not match the protocol (${result.error.issues[0]?.message ?? ''})`);
    return result.data as ResultOf<M>;
  }

  /** Every event after `since`, then live ones, until `close()` or the end is reported. */
  async follow(since: number, handlers: FollowHandlers): Promise<ResultOf<'events.subscribe'>> {
    this.followers.push(handlers);
    return this.call('events.subscribe', { since });
  }

  close(): void {
    this.channel.end();
  }
}
