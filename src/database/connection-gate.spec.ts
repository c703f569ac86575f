import { jest } from '@jest/globals';
import { CONNECT_BACKOFF_MAX_MS, ConnectionGate } from './connection-gate.js';

describe(ConnectionGate.name, () => {
  let now: number;
  const gate = (random = 1) =>
    new ConnectionGate(
      () => now,
      () => random,
    );
  const refused = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });

  beforeEach(() => {
    now = 0;
  });

  it('lets every attempt through while connections succeed', () => {
    const g = gate();
    expect(g.attempt()).toBeUndefined();
    expect(g.attempt()).toBeUndefined();
    g.succeeded();
    expect(g.failing).toBe(false);
  });

  it('after a failure refuses attempts, with the cause code, until the delay passes', () => {
    const g = gate();
    g.failed(refused);
    expect(g.failing).toBe(true);
    expect(g.attempt()).toMatchObject({ code: 'ECONNREFUSED', cause: refused });
    now = 99;
    expect(g.attempt()).toBeDefined();
    now = 100;
    expect(g.attempt()).toBeUndefined();
  });

  it('runs one attempt at a time while failing', () => {
    const g = gate();
    g.failed(refused);
    now = 100;
    expect(g.attempt()).toBeUndefined();
    expect(g.attempt()).toBeDefined();
    g.succeeded();
    expect(g.attempt()).toBeUndefined();
  });

  it('doubles the delay up to the maximum, and draws it between half and all of it', () => {
    const g = gate();
    const delays: number[] = [];
    for (let i = 0; i < 8; i++) {
      g.failed(new Error('Connection terminated unexpectedly'));
      const from = now;
      while (g.attempt()) now += 1;
      delays.push(now - from);
    }
    expect(delays).toEqual([100, 200, 400, 800, 1000, 1000, 1000, 1000]);
    expect(Math.max(...delays)).toBe(CONNECT_BACKOFF_MAX_MS);

    const early = gate(0);
    early.failed(refused);
    now += 50;
    expect(early.attempt()).toBeUndefined();
  });

  it('codes a failure without a code as 08001 (unable to establish a connection)', () => {
    const g = gate();
    g.failed(new Error('Connection terminated unexpectedly'));
    expect(g.attempt()).toMatchObject({ code: '08001' });
  });

  describe('waitToRetry', () => {
    beforeEach(() => {
      jest.useFakeTimers();
    });
    afterEach(() => {
      jest.useRealTimers();
    });

    /** Whether `promise` has settled once pending timers and microtasks up to now have run. */
    const settled = async (promise: Promise<void>) => {
      let done = false;
      void promise.then(() => (done = true));
      await Promise.resolve();
      await Promise.resolve();
      return done;
    };

    it('waits the time asked while connections succeed', async () => {
      const waiting = gate().waitToRetry(300);
      jest.advanceTimersByTime(299);
      expect(await settled(waiting)).toBe(false);
      jest.advanceTimersByTime(1);
      expect(await settled(waiting)).toBe(true);
    });

    it('ends as soon as a connection attempt succeeds', async () => {
      const g = gate();
      g.failed(refused);
      now = 100;
      expect(g.attempt()).toBeUndefined(); // the probe
      const waiting = g.waitToRetry(1000);
      expect(await settled(waiting)).toBe(false);
      g.succeeded();
      expect(await settled(waiting)).toBe(true);
    });

    it('when an attempt fails meanwhile, ends when the next one may start', async () => {
      const g = gate();
      g.failed(refused);
      now = 100;
      expect(g.attempt()).toBeUndefined(); // the probe
      const waiting = g.waitToRetry(1000);
      g.failed(refused); // the probe failed: the next attempt may start 200 ms later
      jest.advanceTimersByTime(199);
      expect(await settled(waiting)).toBe(false);
      jest.advanceTimersByTime(1);
      expect(await settled(waiting)).toBe(true);
    });

    it('while attempts back off, ends when the next one may start', async () => {
      const g = gate();
      g.failed(refused); // next attempt at 100
      now = 40;
      const waiting = g.waitToRetry(1000);
      jest.advanceTimersByTime(59);
      expect(await settled(waiting)).toBe(false);
      jest.advanceTimersByTime(1);
      expect(await settled(waiting)).toBe(true);
    });
  });
});
