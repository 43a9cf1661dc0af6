/**
 * What the client sends while its server is being started again (after E-Stop), held to be taken in order once
 * the server is up, within bounds: past them a line is read at once, and refused as any line is while the
 * server is down.
 */
const MAX_LINES = 10_000;
const MAX_BYTES = 64 * 2 ** 20;

export class HeldClientLines {
  private lines: Buffer[] = [];
  private bytes = 0;

  constructor(
    private readonly maxLines = MAX_LINES,
    private readonly maxBytes = MAX_BYTES,
  ) {}

  /** Hold a copy of `line` (a line may be a view of the whole chunk it came in): false past the bounds. */
  hold(line: Buffer): boolean {
    if (this.lines.length >= this.maxLines || this.bytes + line.length > this.maxBytes) return false;
    this.lines.push(Buffer.from(line));
    this.bytes += line.length;
    return true;
  }

  /** The lines held, in the order they came; none are held after. */
  take(): Buffer[] {
    const lines = this.lines;
    this.lines = [];
    this.bytes = 0;
    return lines;
  }
}
