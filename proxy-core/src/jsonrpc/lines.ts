/**
 * Newline framing for stdio MCP and for Airlock's own sockets: one JSON message per line. Chunks are kept as
 * a list and joined once per line, so a 64 MB message costs one copy, not one per chunk; a reader that can take a
 * line as the chunks it came in (`gathered`) is offered them first, and nothing is joined for a line it takes.
 */

/**
 * A line that came in more than one chunk, as those chunks (its newline and a CR before it left out), and its
 * length: true when taken so, false to have it joined and handed to `onLine` as usual.
 */
export type GatheredLine = (parts: readonly Buffer[], length: number) => boolean;

export class LineSplitter {
  private parts: Buffer[] = [];
  private partsLength = 0;
  /** Inside a line that went over the limit: drop bytes until its newline. */
  private discarding = false;

  /**
   * `maxLine` bounds what one peer can make us hold: a longer line is dropped (reported through `onOverflow`
   * with the bytes seen so far) instead of growing until the process runs out of memory.
   */
  constructor(
    private readonly onLine: (line: Buffer) => void,
    private readonly maxLine = Number.POSITIVE_INFINITY,
    private readonly onOverflow: (bytes: number) => void = () => {},
    private readonly gathered?: GatheredLine,
  ) {}

  push(chunk: Buffer): void {
    let start = 0;
    for (;;) {
      const nl = chunk.indexOf(0x0a, start);
      if (nl === -1) break;
      if (this.discarding) {
        this.discarding = false;
        start = nl + 1;
        continue;
      }
      const from = start;
      start = nl + 1;
      let line: Buffer;
      if (this.partsLength === 0) {
        line = chunk.subarray(from, nl);
      } else {
        if (nl > from) this.parts.push(chunk.subarray(from, nl));
        const parts = this.parts;
        const length = this.partsLength + (nl - from);
        this.parts = [];
        this.partsLength = 0;
        if (this.gathered && this.takenGathered(parts, length)) continue;
        // a line whose newline began the next chunk is the one part it came in
        line = parts.length === 1 ? parts[0]! : Buffer.concat(parts, length);
      }
      if (line.length > 0 && line[line.length - 1] === 0x0d) line = line.subarray(0, line.length - 1);
      if (line.length > 0) this.onLine(line);
    }
    if (start < chunk.length && !this.discarding) {
      const rest = chunk.subarray(start);
      this.parts.push(rest);
      this.partsLength += rest.length;
      if (this.partsLength > this.maxLine) {
        const seen = this.partsLength;
        this.parts = [];
        this.partsLength = 0;
        this.discarding = true;
        this.onOverflow(seen);
      }
    }
  }

  /** Offer a line of several chunks to `gathered`, its CR cut off as `onLine`'s would be; `parts` stay as they are. */
  private takenGathered(parts: readonly Buffer[], length: number): boolean {
    const last = parts[parts.length - 1]!;
    if (last[last.length - 1] !== 0x0d) return parts.length > 1 && this.gathered!(parts, length);
    const cut = last.length === 1 ? parts.slice(0, -1) : [...parts.slice(0, -1), last.subarray(0, last.length - 1)];
    return cut.length > 1 && this.gathered!(cut, length - 1);
  }

  /** Bytes held for a line that has not ended yet. */
  get pending(): number {
    return this.partsLength;
  }

  /** The unterminated tail at end of stream, if any (a peer that exits without a final newline). */
  flush(): void {
    if (this.partsLength === 0) return;
    const line = Buffer.concat(this.parts, this.partsLength);
    this.parts = [];
    this.partsLength = 0;
    if (line.length > 0) this.onLine(line);
  }
}
