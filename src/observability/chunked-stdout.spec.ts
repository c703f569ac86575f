import { afterEach, beforeEach, describe, expect, it, jest } from '@jest/globals';
import { ChunkedStdout, type LineWriter } from './chunked-stdout.js';

/** A writer that records what it was handed. */
function recordingWriter() {
  const writes: string[] = [];
  const calls: string[] = [];
  const writer: LineWriter = {
    write: (chunk) => writes.push(chunk),
    flush: (callback) => {
      calls.push('flush');
      callback?.();
    },
    flushSync: () => calls.push('flushSync'),
  };
  return { writer, writes, calls };
}

const line = (n: number) => `{"n":${n}}\n`;

describe(ChunkedStdout.name, () => {
  beforeEach(() => {
    jest.useFakeTimers();
  });
  afterEach(() => {
    jest.useRealTimers();
  });

  it('writes the lines held as one chunk, in order, once they reach the chunk size', () => {
    const { writer, writes } = recordingWriter();
    const stdout = new ChunkedStdout(writer, 3 * line(1).length, 100);
    stdout.write(line(1));
    stdout.write(line(2));
    expect(writes).toEqual([]);
    stdout.write(line(3));
    expect(writes).toEqual([line(1) + line(2) + line(3)]);
    stdout.write(line(4));
    expect(writes).toEqual([line(1) + line(2) + line(3)]);
  });

  it('writes a line at the latest the hold time after the first line of its chunk', () => {
    const { writer, writes } = recordingWriter();
    const stdout = new ChunkedStdout(writer, 1024, 100);
    stdout.write(line(1));
    jest.advanceTimersByTime(60);
    stdout.write(line(2));
    jest.advanceTimersByTime(39);
    expect(writes).toEqual([]);
    jest.advanceTimersByTime(1);
    expect(writes).toEqual([line(1) + line(2)]);
    // Nothing held: no timer, no empty write.
    jest.advanceTimersByTime(1000);
    expect(writes).toEqual([line(1) + line(2)]);
    expect(jest.getTimerCount()).toBe(0);
  });

  it('starts the hold time again with the first line after a chunk was written', () => {
    const { writer, writes } = recordingWriter();
    const stdout = new ChunkedStdout(writer, 2 * line(1).length, 100);
    stdout.write(line(1));
    stdout.write(line(2)); // full: written now
    jest.advanceTimersByTime(50);
    stdout.write(line(3));
    jest.advanceTimersByTime(99);
    expect(writes).toEqual([line(1) + line(2)]);
    jest.advanceTimersByTime(1);
    expect(writes).toEqual([line(1) + line(2), line(3)]);
  });

  it('hands what it holds to the writer on flush() and flushSync(), before the writer flushes', () => {
    const { writer, writes, calls } = recordingWriter();
    const stdout = new ChunkedStdout(writer, 1024, 100);
    stdout.write(line(1));
    const flushed = jest.fn();
    stdout.flush(flushed);
    expect([writes, calls]).toEqual([[line(1)], ['flush']]);
    expect(flushed).toHaveBeenCalledTimes(1);
    stdout.write(line(2));
    stdout.flushSync();
    expect([writes, calls]).toEqual([
      [line(1), line(2)],
      ['flush', 'flushSync'],
    ]);
    expect(jest.getTimerCount()).toBe(0);
  });

  it('writes every line straight through once the process exits, with no timer left', () => {
    const { writer, writes, calls } = recordingWriter();
    const stdout = new ChunkedStdout(writer, 1024, 100);
    stdout.write(line(1));
    stdout.endOfProcess();
    expect([writes, calls]).toEqual([[line(1)], ['flushSync']]);
    stdout.write(line(2));
    expect([writes, calls]).toEqual([
      [line(1), line(2)],
      ['flushSync', 'flushSync'],
    ]);
    expect(jest.getTimerCount()).toBe(0);
  });
});
