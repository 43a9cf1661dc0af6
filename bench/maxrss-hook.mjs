// Loaded with `node --import` into a process the benchmarks measure: at exit, its peak resident set (KB) goes to
// the file AIRLOCK_BENCH_MAXRSS names.
import { writeFileSync } from 'node:fs';

const out = process.env.AIRLOCK_BENCH_MAXRSS;
if (out) process.on('exit', () => writeFileSync(out, String(process.resourceUsage().maxRSS)));
