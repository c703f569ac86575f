import { describe, expect, it } from '@jest/globals';
import { LoopSaturation } from './loop-saturation.js';
import type { WorkClass } from './work-class.js';

/** A saturation guard fed the utilisations given, one per window, with a fixed draw. */
function guard(busy: number, draw = 0.5) {
  let utilisation = 0;
  const saturation = new LoopSaturation(
    busy,
    () => utilisation,
    () => draw,
  );
  const windows = (...values: number[]) => {
    for (const value of values) {
      utilisation = value;
      saturation.tick();
    }
  };
  return { saturation, windows };
}

const classes: WorkClass[] = ['feed', 'list', 'read', 'write'];

describe(LoopSaturation.name, () => {
  it('admits everything while the loop has idle time', () => {
    const { saturation, windows } = guard(0.9);
    windows(0.5, 0.89, 0.9, 0.3);
    expect(saturation.share).toBe(1);
    expect(classes.map((c) => saturation.admits(c))).toEqual([true, true, true, true]);
  });

  it('sheds nothing for a single saturated window: it may be a pause, not load', () => {
    const { saturation, windows } = guard(0.9);
    windows(0.99, 0.5, 0.99, 0.5);
    expect(saturation.share).toBe(1);
  });

  it('cuts the admitted share by a quarter per saturated window, down to a floor', () => {
    const { saturation, windows } = guard(0.9);
    windows(0.95, 0.95);
    expect(saturation.share).toBeCloseTo(0.75);
    windows(0.95);
    expect(saturation.share).toBeCloseTo(0.5625);
    windows(...Array<number>(100).fill(1));
    expect(saturation.share).toBeCloseTo(0.02);
  });

  it('gives the share back 5 points per window below the threshold', () => {
    const { saturation, windows } = guard(0.9);
    windows(1, 1, 1);
    const low = saturation.share;
    windows(0.5);
    expect(saturation.share).toBeCloseTo(low + 0.05);
    windows(...Array<number>(40).fill(0.5));
    expect(saturation.share).toBe(1);
  });

  it('sheds the classes in order: the feed first, writes last', () => {
    // Share 0.75 ** 2 ≈ 0.56: the feed is admitted with 0.56 ** 2 ≈ 0.32, a list with ≈ 0.46,
    // a read with ≈ 0.53 and a write with ≈ 0.56. A draw of 0.5 splits them.
    const { saturation, windows } = guard(0.9, 0.5);
    windows(1, 1, 1);
    expect(classes.map((c) => saturation.admits(c))).toEqual([false, false, true, true]);
  });

  it('never sheds when its threshold is 1 (OVERLOAD_LOOP_BUSY_PERCENT=100)', () => {
    const { saturation, windows } = guard(1);
    windows(1, 1, 1, 1);
    expect(saturation.share).toBe(1);
  });
});
