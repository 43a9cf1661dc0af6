// Loaded with `--import` into a proxy (the byte relay or `airlock wrap`) and into the server behind it by
// bench/call-path.mjs: it notes when
// each socket's 'data' reaches its listener, when the event loop's turn that began with it ends (its check phase,
// by setImmediate), and when each socket write is started, with the socket's fd, on a clock every process on the
// machine shares (performance.timeOrigin + performance.now(), µs apart at most).
// SIGUSR2 writes what was noted since the last SIGUSR2 to $CALL_PATH_DIR/<pid>.json and starts over. (Not an
// AIRLOCK_ variable: a wrapper passes none of those on to its server.)
// Nothing is written to stdout or stderr: a proxy's stdout is its client's, a server's its proxy's.
import { writeFileSync } from 'node:fs';
import { Socket } from 'node:net';
import { Readable } from 'node:stream';

const DIR = process.env.CALL_PATH_DIR;
const DATA = 1;
const WRITE = 2;
const TURN_END = 3;
let events = [];
const now = () => performance.timeOrigin + performance.now();
const fdOf = (socket) => socket._handle?.fd ?? -1;

if (DIR) {
  const on = Readable.prototype.on;
  // a 'data' listener of a socket is timed as it is called: the moment the proxy's code gets the bytes
  Readable.prototype.on = Readable.prototype.addListener = function (event, listener) {
    if (event !== 'data' || !(this instanceof Socket)) return on.call(this, event, listener);
    const socket = this;
    return on.call(this, event, function (chunk) {
      const fd = fdOf(socket);
      events.push(now(), DATA, fd);
      setImmediate(() => events.push(now(), TURN_END, fd));
      return listener.call(this, chunk);
    });
  };
  // every write of a net.Socket (write and writev alike) passes here on its way to the handle
  const writeGeneric = Socket.prototype._writeGeneric;
  Socket.prototype._writeGeneric = function (...args) {
    events.push(now(), WRITE, fdOf(this));
    return writeGeneric.apply(this, args);
  };
  process.on('SIGUSR2', () => {
    writeFileSync(`${DIR}/${process.pid}.json`, JSON.stringify(events));
    events = [];
  });
}
