/**
 * Two Channels joined in memory: what the broker and a peer say to each other, with no socket, no process and
 * no handshake, so broker logic runs in a unit test in milliseconds.
 */
import type { Socket } from 'node:net';
import { Duplex } from 'node:stream';
import { Channel } from '../../proxy-core/src/ipc/channel.js';

function duplexPair(): [Duplex, Duplex] {
  let a!: Duplex;
  let b!: Duplex;
  const make = (other: () => Duplex) =>
    new Duplex({
      read() {},
      write(chunk, _enc, done) {
        other().push(chunk);
        done();
      },
      final(done) {
        other().push(null);
        done();
      },
      destroy(err, done) {
        other().destroy();
        done(err);
      },
    });
  a = make(() => b);
  b = make(() => a);
  return [a, b];
}

/** [the broker's end, the peer's end] */
export function channelPair(): [Channel, Channel] {
  const [a, b] = duplexPair();
  return [new Channel(a as unknown as Socket), new Channel(b as unknown as Socket)];
}
