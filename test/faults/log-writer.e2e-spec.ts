// The log writer's promises at the end of a process (docs/deploying.md, "Logs"), each checked on
// a child process that writes through the built ChunkedStdout to a pipe the test reads.
import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { buildService, waitFor } from '../support/service-process.js';
import { root } from '../support/project-files.js';

const MODULE = pathToFileURL(path.join(root, 'dist/src/observability/chunked-stdout.js')).href;

interface Child {
  process: ChildProcess;
  stdout(): string;
  stderr(): string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/**
 * Runs `body` as an ES module with `stdout` (the process's ChunkedStdout) and `line(n, size)` (a
 * log line of about `size` bytes, 200 by default) in scope. Its stdout is read only once `readFrom` is on stderr, so
 * the pipe can be made to fill up first.
 */
function runChild(body: string, readFrom?: string): Child {
  const code = `
    import { chunkedStdout } from ${JSON.stringify(MODULE)};
    const stdout = chunkedStdout();
    const line = (n, size = 200) => JSON.stringify({ n, pad: 'x'.repeat(size) }) + '\\n';
    ${body}
  `;
  const child = spawn(process.execPath, ['--input-type=module', '-e', code], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
  if (readFrom) child.stdout.pause();
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    err += chunk;
    if (readFrom && err.includes(readFrom)) child.stdout.resume();
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('close', (code, signal) => resolve({ code, signal })),
  );
  return { process: child, stdout: () => out, stderr: () => err, exited };
}

/** The `n` of each line on stdout; fails on a line that is not whole JSON. */
const numbers = (stdout: string) =>
  stdout
    .split('\n')
    .filter((text) => text.length > 0)
    .map((text) => (JSON.parse(text) as { n: number | string }).n);

describe('log lines at the end of a process (e2e)', () => {
  beforeAll(() => buildService());

  it('writes every line, whole and in order, when the process exits with a write in flight', async () => {
    // A first line larger than the pipe, which nobody reads yet: its write is still in flight,
    // blocked, when the process exits with more lines held.
    const child = runChild(
      `stdout.write(line(0, 1_000_000));
       for (let n = 1; n < 1000; n++) stdout.write(line(n));
       process.stderr.write('exiting\\n');
       process.exit(0);`,
      'exiting',
    );
    expect(await child.exited).toEqual({ code: 0, signal: null });
    expect(numbers(child.stdout())).toEqual(Array.from({ length: 1000 }, (_, n) => n));
  });

  it('writes a line logged after the exit flush', async () => {
    const child = runChild(
      `stdout.write(line('first'));
       process.on('exit', () => stdout.write(line('after exit')));`,
    );
    expect(await child.exited).toEqual({ code: 0, signal: null });
    expect(numbers(child.stdout())).toEqual(['first', 'after exit']);
  });

  it('keeps, when killed, every line its flush handed over', async () => {
    const child = runChild(
      `for (let n = 0; n < 500; n++) stdout.write(line(n));
       stdout.flush(() => process.stderr.write('flushed\\n'));
       setInterval(() => {}, 1000);`,
    );
    await waitFor('the lines handed over', () =>
      Promise.resolve(child.stderr().includes('flushed')),
    );
    child.process.kill('SIGKILL');
    expect(await child.exited).toEqual({ code: null, signal: 'SIGKILL' });
    expect(numbers(child.stdout())).toEqual(Array.from({ length: 500 }, (_, n) => n));
  });
});
