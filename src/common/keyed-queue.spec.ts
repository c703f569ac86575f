import { KeyedQueue } from './keyed-queue.js';

/** A promise and its resolve, to finish work when the test says. */
function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { open, opened };
}

describe('KeyedQueue', () => {
  it('runs the work of one key one at a time, in order', async () => {
    const queue = new KeyedQueue<string>();
    const log: string[] = [];
    const first = gate();
    const a = queue.run('g', async () => {
      log.push('a starts');
      await first.opened;
      log.push('a ends');
      return 'a';
    });
    const b = queue.run('g', () => {
      log.push('b starts');
      return Promise.resolve('b');
    });
    await Promise.resolve();
    await Promise.resolve();
    expect(log).toEqual(['a starts']);
    first.open();
    expect(await Promise.all([a, b])).toEqual(['a', 'b']);
    expect(log).toEqual(['a starts', 'a ends', 'b starts']);
  });

  it('runs the work of different keys at once', async () => {
    const queue = new KeyedQueue<number>();
    const held = gate();
    const started: number[] = [];
    const one = queue.run(1, async () => {
      started.push(1);
      await held.opened;
    });
    const two = queue.run(2, () => {
      started.push(2);
      return Promise.resolve();
    });
    await two;
    expect(started).toEqual([1, 2]);
    held.open();
    await one;
  });

  it('goes on after a failure, which reaches only its own caller, and forgets idle keys', async () => {
    const queue = new KeyedQueue<string>();
    const failed = queue.run('g', () => Promise.reject(new Error('boom')));
    const next = queue.run('g', () => Promise.resolve('next'));
    await expect(failed).rejects.toThrow('boom');
    expect(await next).toBe('next');
    await Promise.resolve();
    expect(queue.size).toBe(0);
  });
});
