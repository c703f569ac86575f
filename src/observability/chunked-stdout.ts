import { StdoutThread } from './stdout-thread.js';

/** About how many characters of lines are held before they are written. */
export const CHUNK_CHARS = 32 * 1024;
/** The longest a line is held before it is written. */
export const HOLD_MS = 100;

/** What ChunkedStdout writes to: a StdoutThread, or a test's stand-in. */
export interface LineWriter {
  write(chunk: string): unknown;
  flush(callback?: (error?: Error) => void): void;
  flushSync(): void;
}

/**
 * The service's log lines on their way to stdout, handed to the writer in chunks of about
 * CHUNK_CHARS characters, and at the latest HOLD_MS after the first line of a chunk.
 *
 * Each write is a hand-over to another thread and a wake-up of whatever reads the pipe; an
 * asynchronous writer without chunks wrote about 10 lines at a time at 4,000 gRPC calls/s. In
 * chunks, a busy service writes once per ~130 lines; joining the held lines costs less than
 * sonic-boom's own `minLength` buffering, which measures the whole buffer again for every line
 * (bench/README.md, "gRPC against its floor").
 *
 * Nothing is held past the process: when it exits (the end of a graceful shutdown, a refused
 * boot, a fatal error), what is held and what the writer has not yet written are written before
 * the exit goes on, and a line logged after that is written at once, synchronously.
 * `logger.flush()` hands what is held over at once. A SIGKILL loses what is held (the last
 * HOLD_MS of lines) and what the writer has not yet written: docs/deploying.md, "Logs".
 */
export class ChunkedStdout {
  private lines: string[] = [];
  private chars = 0;
  private holding?: NodeJS.Timeout;
  /** Set at exit: no timer would fire any more. */
  private writingThrough = false;

  constructor(
    private readonly writer: LineWriter,
    private readonly chunkChars = CHUNK_CHARS,
    private readonly holdMs = HOLD_MS,
  ) {}

  /** pino's stream interface: one serialized line, its newline included. */
  write(line: string): boolean {
    this.lines.push(line);
    this.chars += line.length;
    if (this.writingThrough) this.flushSync();
    else if (this.chars >= this.chunkChars) this.handOver();
    else this.holding ??= setTimeout(() => this.handOver(), this.holdMs).unref();
    return true;
  }

  /** `logger.flush()`: what is held goes to the writer now. */
  flush(callback?: (error?: Error) => void): void {
    this.handOver();
    this.writer.flush(callback);
  }

  /** What is held, and what the writer holds, written before this returns. */
  flushSync(): void {
    this.handOver();
    this.writer.flushSync();
  }

  /** At exit: everything written now, and every later line as it comes. */
  endOfProcess(): void {
    this.writingThrough = true;
    this.flushSync();
  }

  private handOver(): void {
    clearTimeout(this.holding);
    this.holding = undefined;
    if (this.lines.length === 0) return;
    const chunk = this.lines.join('');
    this.lines = [];
    this.chars = 0;
    this.writer.write(chunk);
  }
}

let processStdout: ChunkedStdout | undefined;

/**
 * The process's one ChunkedStdout on file descriptor 1, written by a thread of its own and
 * synchronously from the moment the process exits. Every root logger of the process writes through it, so lines keep the order they were
 * logged in.
 */
export function chunkedStdout(): ChunkedStdout {
  if (!processStdout) {
    const stdout = new ChunkedStdout(new StdoutThread(1));
    process.on('exit', () => stdout.endOfProcess());
    processStdout = stdout;
  }
  return processStdout;
}
