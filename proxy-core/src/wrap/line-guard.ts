/**
 * A line's handling, however it ends: a line that makes it throw (a fault that hostile input found) costs that
 * line, said in the log, never the wrapper and the client's session with it. Every line read from the client or
 * the server goes through one (run-wrapper.ts), and so do the client's lines held while the server restarted
 * (relay.ts).
 */
import { preview } from './server-lines.js';

export function guardedLines(from: string, log: (msg: string) => void, handle: (line: Buffer) => void): (line: Buffer) => void {
  return (line) => {
    try {
      handle(line);
    } catch (err) {
      log(`airlock: a line from ${from} could not be handled (${(err as Error).message}); dropped (${preview(line)})`);
    }
  };
}
