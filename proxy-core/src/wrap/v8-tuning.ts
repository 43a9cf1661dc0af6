/**
 * How V8 runs a wrapper: a small process that lives as long as its client and does the same few things for every
 * call. Some of V8's defaults suit a browser tab better than that, and the wrapper changes them once, as it starts.
 * (These flags are read when they are next needed, so setting them at run time takes effect; the heap's limits
 * themselves cannot be changed after start. The sooner they are set, the less the loading of modules has grown
 * the young generation already, and the more of the call path is compiled under them.)
 */
import { setFlagsFromString } from 'node:v8';

/**
 * Node's own flags for a wrapper's process, which only its command line can set (they size what exists before any
 * module runs): the launcher that protect writes into client configs puts them before Airlock's script
 * (cli/launcher.ts).
 *
 * `--v8-pool-size=1`: one worker thread for V8's background jobs, not Node's four. The wrapper's background work is
 * its optimising compiles and the garbage collector's helpers; with four threads up to four compiles ran at once,
 * and the memory each took (its zone, its thread's allocator arena) stayed with the process. After 3,000
 * pipelined calls the wrapper was 0.9 MB smaller at the median of 8 pairs of runs (its anonymous memory 0.9 to
 * 1.7 MB smaller), and the median call one at a time 1.22 to 1.26 times the byte relay's against 1.29 to 1.30;
 * eight wrappers' throughput, the pipelined rate and start-up with 10,000 tools stayed within their noise in
 * alternating runs. (Compiling on the main thread instead saved more memory, and doubled the slowest calls.)
 */
export const WRAPPER_NODE_FLAGS: readonly string[] = ['--v8-pool-size=1'];

/**
 * How much bytecode a function runs between V8's looks at whether to optimise it (V8's default: 67,584). The
 * call path is a few dozen small functions run once or twice a call: at the default they reach optimised code
 * only after a thousand calls or more, and a client calling one at a time is answered from baseline code all that
 * while. Measured against the byte relay in the same runs (the bench's own method, 3,300 calls one at a time),
 * the median call went from 1.34–1.52× the relay's to 1.16–1.33× with this budget, the CPU of a pipelined call
 * fell by a tenth, and memory, the first 3,000 calls of 8 wrappers, and start-up with 10,000 tools stayed
 * within their noise. Only what runs that often is optimised sooner: start-up code runs once.
 */
const INTERRUPT_BUDGET = 15_000;

/**
 * How much bytecode TurboFan inlines into one function it optimises, at most (V8's default: 920). An optimising
 * compile costs in proportion to the graph it builds, and it runs on a helper thread beside the calls: in 8
 * wrappers' first 3,000 pipelined calls each, those threads took some 40 µs of CPU a call, on the cores the
 * calls need. With less inlined the compiles are smaller; in interleaved runs the 8 wrappers answered 14,800 to
 * 16,900 calls/s against 11,600 to 14,700, and one wrapper's pipelined rate and median call were no worse.
 */
const INLINED_BYTECODE = 300;

let done = false;

export function tuneV8ForWrapper(): void {
  if (done) return;
  done = true;
  keepYoungGenerationSmall();
  optimiseTheCallPathSooner();
}

/**
 * V8 grows its young generation (up to 2 × 16 MB) once the bytes that lived through scavenges add up to its size,
 * which under a steady stream of calls they always do: the calls in flight and the journal entries waiting for
 * the broker's acknowledgement survive a scavenge or two. That is tens of megabytes of RSS bought for a little
 * less GC work, in a process that holds well under a megabyte per moment. The wrapper keeps it at its first
 * size: more, smaller scavenges, each as cheap as the live set is small. (The growth factor is read at each
 * growth.)
 *
 * What does live through two scavenges (journal entries waiting longest for the broker) goes to the old
 * generation, whose limit V8 sets to several times what was live at the last full collection: with a few
 * megabytes live, tens of megabytes of garbage. The wrapper lets it grow by half of what is live instead: a full
 * collection of so small a heap takes a few milliseconds.
 */
function keepYoungGenerationSmall(): void {
  setFlag('--semi-space-growth-factor=1');
  setFlag('--heap-growing-percent=50');
}

/**
 * The call path reaches optimised code after some hundreds of calls, not thousands (INTERRUPT_BUDGET), in smaller
 * compiles (INLINED_BYTECODE).
 */
function optimiseTheCallPathSooner(): void {
  setFlag(`--interrupt-budget=${INTERRUPT_BUDGET}`);
  setFlag(`--max-inlined-bytecode-size-cumulative=${INLINED_BYTECODE}`);
}

function setFlag(flag: string): void {
  try {
    setFlagsFromString(flag);
  } catch {
    // a runtime without the flag only keeps its default
  }
}
