import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { StdoutThread } from './stdout-thread.js';

describe(StdoutThread.name, () => {
  let dir: string;
  let file: string;
  let fd: number;

  beforeEach(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'stdout-thread-'));
    file = path.join(dir, 'out.log');
    fd = openSync(file, 'w');
  });
  afterEach(() => {
    closeSync(fd);
    rmSync(dir, { recursive: true });
  });

  const chunks = Array.from({ length: 50 }, (_, n) => `${n}:${'x'.repeat(10_000)}\n`);

  it('has written every chunk handed over, in order, when flushSync returns', () => {
    const writer = new StdoutThread(fd);
    for (const chunk of chunks) writer.write(chunk);
    writer.flushSync();
    expect(readFileSync(file, 'utf8')).toBe(chunks.join(''));
  });

  it('calls back from flush once every chunk handed over is written', async () => {
    const writer = new StdoutThread(fd);
    for (const chunk of chunks) writer.write(chunk);
    await new Promise<void>((resolve) => writer.flush(() => resolve()));
    expect(readFileSync(file, 'utf8')).toBe(chunks.join(''));
  });
});
