import { describe, expect, it } from '@jest/globals';
import { GradientLimit, WINDOW_MS } from './gradient-limit.js';

/** `windows` windows of samples at `latencyMs`, each with `inFlight` in flight. */
function feed(
  limit: GradientLimit,
  windows: number,
  latencyMs: number,
  inFlight: number,
  from = 0,
) {
  let now = from;
  for (let window = 0; window < windows; window++) {
    for (let sample = 0; sample < 20; sample++) {
      now += WINDOW_MS / 20;
      limit.sample(latencyMs, inFlight, now);
    }
  }
  return now;
}

describe(GradientLimit.name, () => {
  it('grows while latency holds and the limit is in use', () => {
    const limit = new GradientLimit({ min: 10, max: 1000, initial: 50 });
    feed(limit, 20, 5, 50);
    expect(limit.limit).toBeGreaterThan(60);
  });

  it('does not grow while less than half of it is in use', () => {
    const limit = new GradientLimit({ min: 10, max: 1000, initial: 50 });
    feed(limit, 20, 5, 10);
    expect(limit.limit).toBe(50);
  });

  it('falls when latency rises over its baseline (queueing), down to its floor', () => {
    const limit = new GradientLimit({ min: 10, max: 1000, initial: 100 });
    const now = feed(limit, 10, 5, 100);
    const before = limit.limit;
    feed(limit, 5, 50, 100, now);
    expect(limit.limit).toBeLessThan(before * 0.7);
    feed(limit, 100, 50, 100, now + 10_000);
    expect(limit.limit).toBeGreaterThanOrEqual(10);
  });

  it('stays within its bounds', () => {
    const limit = new GradientLimit({ min: 10, max: 80, initial: 50 });
    feed(limit, 200, 5, 1000);
    expect(limit.limit).toBe(80);
    feed(limit, 200, 500, 1000, 1e6);
    expect(limit.limit).toBeGreaterThanOrEqual(10);
  });
});
