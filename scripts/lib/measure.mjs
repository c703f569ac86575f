// Latency bookkeeping shared by the benchmark (bench/) and the soak run (scripts/soak.mjs).

/**
 * Nearest-rank percentile (0..100) of an ascending array; NaN when it is empty.
 * @param {ArrayLike<number>} sorted
 * @param {number} p
 * @returns {number}
 */
export const percentile = (sorted, p) =>
  sorted.length === 0 ? NaN : sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)];

/** A growable Float64Array of latencies in milliseconds. */
export class Samples {
  constructor(capacity = 1 << 16) {
    this.values = new Float64Array(capacity);
    this.length = 0;
  }

  /** @param {number} value */
  add(value) {
    if (this.length === this.values.length) {
      const grown = new Float64Array(this.values.length * 2);
      grown.set(this.values);
      this.values = grown;
    }
    this.values[this.length++] = value;
  }

  /**
   * Percentiles (0..100) by the nearest-rank method; call once, it sorts in place.
   * @param {number[]} ps
   * @returns {number[]}
   */
  percentiles(...ps) {
    const sorted = this.values.subarray(0, this.length).sort();
    return ps.map((p) => percentile(sorted, p));
  }
}

/**
 * A small seeded PRNG (mulberry32), so every run sends the same sequence.
 * @returns {() => number}
 */
export function random(seed = 42) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
