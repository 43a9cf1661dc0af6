/** The client side of the broker socket: connect, prove the secret, check the broker proves it too. */
import { connect as netConnect } from 'node:net';
import { AUTH, HELLO, type Role } from '../protocol/names.js';
import { Channel, IpcError } from './channel.js';
import { type BrokerEndpoint, userEndpoint } from './paths.js';
import { newNonce, proof, proofMatches, readSecretFile } from './secret.js';
import { assertServiceOwned } from './system.js';

export type { Role } from '../protocol/names.js';

export interface ConnectOptions {
  dir: string;
  /** Where the broker is, when not the broker of `dir` (the system broker: ipc/system.ts). */
  endpoint?: BrokerEndpoint;
  role: Role;
  /** Give up on connect plus handshake after this long. */
  timeoutMs?: number;
}

export class BrokerUnavailable extends IpcError {
  constructor(message: string) {
    super('broker-unavailable', message);
    this.name = 'BrokerUnavailable';
  }
}

export const START_HINT = 'start it with `airlock daemon` (or open the Airlock app)';

/** Connect and authenticate. Rejects with BrokerUnavailable when nothing is listening. */
export function connectBroker(opts: ConnectOptions): Promise<Channel> {
  const timeoutMs = opts.timeoutMs ?? 2000;
  const endpoint = opts.endpoint ?? userEndpoint(opts.dir);
  const startHint = endpoint.startHint ?? START_HINT;
  let secret: Buffer;
  try {
    assertServiceOwned(endpoint);
    secret = readSecretFile(endpoint.secretPath);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') {
      const where = opts.endpoint ? `no secret at ${endpoint.secretPath}` : `no broker has run in ${opts.dir}`;
      return Promise.reject(new BrokerUnavailable(`Airlock is not running (${where}); ${startHint}`));
    }
    if (code === 'EACCES') return Promise.reject(new BrokerUnavailable(`cannot read Airlock's secret ${endpoint.secretPath} (permission denied)${endpoint.owner !== undefined ? ': only members of the service\'s users group may use the system broker (sudo usermod -aG GROUP $USER, then log in again)' : ''}`));
    return Promise.reject(err instanceof Error ? err : new Error(String(err)));
  }
  const path = endpoint.socketPath;
  return new Promise<Channel>((resolve, reject) => {
    const socket = netConnect(path);
    let settled = false;
    const fail = (err: Error) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      reject(err);
    };
    // a broker that accepts but never says hello is stopped or hung: say so rather than wait on it
    const timer = setTimeout(
      () => fail(new BrokerUnavailable(`Airlock's broker did not answer within ${timeoutMs} ms: it may be stopped or hung (wrapped servers refuse every call meanwhile); restart it with \`airlock daemon\``)),
      timeoutMs,
    );
    timer.unref();
    socket.once('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT' || err.code === 'ECONNREFUSED') fail(new BrokerUnavailable(`Airlock is not running; ${startHint}`));
      else fail(new BrokerUnavailable(`cannot reach Airlock (${err.code ?? err.message}); ${startHint}`));
    });
    socket.once('connect', () => {
      const channel = new Channel(socket);
      channel.setHandlers({
        notify: (method, params) => {
          if (method !== HELLO || settled) return;
          const brokerNonce = (params as { nonce?: unknown } | undefined)?.nonce;
          if (typeof brokerNonce !== 'string') return fail(new IpcError('handshake', 'broker sent a malformed hello'));
          const clientNonce = newNonce();
          channel
            .request<{ proof?: unknown }>(AUTH, { nonce: clientNonce, proof: proof(secret, 'client', brokerNonce, clientNonce), role: opts.role })
            .then((answer) => {
              if (!proofMatches(proof(secret, 'broker', brokerNonce, clientNonce), answer?.proof)) {
                fail(new IpcError('handshake', 'the process on the Airlock socket does not know the secret; refusing to talk to it'));
                return;
              }
              settled = true;
              clearTimeout(timer);
              channel.setHandlers({});
              resolve(channel);
            }, (err: Error) => fail(err instanceof IpcError && err.code === 'unauthorized' ? err : new BrokerUnavailable(err.message)));
        },
        close: (err) => fail(err ?? new BrokerUnavailable(`Airlock closed the connection; ${startHint}`)),
      });
    });
  });
}
