import { Worker } from 'node:worker_threads';
import type { LineWriter } from './chunked-stdout.js';

/** Slots of the state the thread shares: chunks written so far, and whether writing failed. */
const WRITTEN = 0;
const FAILED = 1;

// CommonJS run by the worker: each chunk written whole with writeSync, then counted. A full
// non-blocking pipe (EAGAIN) is tried again 10 ms later; any other error (stdout closed) stops
// the writing for good rather than failing the process.
const WRITER = `
const { parentPort, workerData } = require('node:worker_threads');
const { writeSync } = require('node:fs');
const state = new Int32Array(workerData.state);
const pause = new Int32Array(new SharedArrayBuffer(4));
parentPort.on('message', (chunk) => {
  if (Atomics.load(state, ${FAILED})) return;
  const bytes = Buffer.from(chunk, 'utf8');
  for (let offset = 0; offset < bytes.length; ) {
    try {
      offset += writeSync(workerData.fd, bytes, offset);
    } catch (error) {
      if (error.code !== 'EAGAIN') {
        Atomics.store(state, ${FAILED}, 1);
        Atomics.notify(state, ${WRITTEN});
        return;
      }
      Atomics.wait(pause, 0, 0, 10);
    }
  }
  Atomics.add(state, ${WRITTEN}, 1);
  Atomics.notify(state, ${WRITTEN});
});
`;

/**
 * Writes chunks to a file descriptor from a thread of its own, in the order given, without
 * blocking the event loop. Unlike an asynchronous write on libuv's thread pool, which the process
 * can neither wait for nor cancel once it is in flight, the thread counts what it has written:
 * `flushSync` blocks until every chunk handed over is written (at exit, so what is written after
 * it never lands between the pieces of a chunk still in flight), and `flush` waits for it.
 */
export class StdoutThread implements LineWriter {
  private readonly state = new Int32Array(new SharedArrayBuffer(8));
  private readonly worker: Worker;
  private handedOver = 0;

  constructor(fd = 1) {
    this.worker = new Worker(WRITER, {
      eval: true,
      workerData: { fd, state: this.state.buffer },
      // Not the process's own flags: `--import` would start tracing in this thread too.
      execArgv: [],
      stdout: false,
      stderr: false,
    });
    // The thread never keeps the process alive; at exit, flushSync waits for it.
    this.worker.unref();
  }

  write(chunk: string): void {
    this.handedOver += 1;
    this.worker.postMessage(chunk);
  }

  flush(callback?: (error?: Error) => void): void {
    const written = Atomics.load(this.state, WRITTEN);
    if (this.done(written)) {
      callback?.();
      return;
    }
    const wait = Atomics.waitAsync(this.state, WRITTEN, written);
    if (wait.async) void wait.value.then(() => this.flush(callback));
    else this.flush(callback);
  }

  flushSync(): void {
    for (;;) {
      const written = Atomics.load(this.state, WRITTEN);
      if (this.done(written)) return;
      Atomics.wait(this.state, WRITTEN, written);
    }
  }

  private done(written: number): boolean {
    return written >= this.handedOver || Atomics.load(this.state, FAILED) === 1;
  }
}
