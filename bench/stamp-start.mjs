// Preloaded (`node --import`) into a proxy and its server by bench/wrap-startup.mjs: appends the moment the
// process began (performance.timeOrigin, milliseconds since the epoch) and whether it is the server or the proxy
// to $AIRLOCK_BENCH_STAMPS. The relay and the wrapper both get it, so its small cost falls on both sides alike.
import { appendFileSync } from 'node:fs';

const file = process.env.AIRLOCK_BENCH_STAMPS;
const role = process.argv[1]?.endsWith('fixture-server.mjs') ? 'server' : 'proxy';
if (file) appendFileSync(file, `${role} ${performance.timeOrigin}\n`);
