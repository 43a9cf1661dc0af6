// Preloaded (`node --import`) into a proxy and its server by bench/wrap-startup.mjs: appends whether it is the
// server or the proxy, the moment the process began (performance.timeOrigin, milliseconds since the epoch) and,
// for the server, the CPU time its parent (the proxy) had used by then, to $BENCH_START_STAMPS. The relay and
// the wrapper both get it, so its small cost falls on both sides alike. (Not an AIRLOCK_ variable: a wrapped server
// is started without those.)
import { appendFileSync, readdirSync, readFileSync } from 'node:fs';

/** CPU time of all of a process's threads so far (ms; schedstat counts nanoseconds). */
const cpuMs = (pid) =>
  readdirSync(`/proc/${pid}/task`).reduce((sum, tid) => sum + Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]) / 1e6, 0);

const file = process.env.BENCH_START_STAMPS;
const server = process.argv[1]?.endsWith('fixture-server.mjs');
if (file) appendFileSync(file, server ? `server ${performance.timeOrigin} ${cpuMs(process.ppid)}\n` : `proxy ${performance.timeOrigin}\n`);
