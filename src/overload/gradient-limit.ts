/** Settings of the adaptive concurrency limit (docs/overload.md says how each was chosen). */
export interface GradientLimitSettings {
  /** The limit never falls below this. */
  min: number;
  /** The limit never rises above this (OVERLOAD_MAX_IN_FLIGHT). */
  max: number;
  /** Where the limit starts. */
  initial: number;
}

/** How far the short-term latency may rise over the long-term one before the limit falls. */
const TOLERANCE = 1.5;
/** Weight of a new estimate in the limit (the rest is the old limit). */
const SMOOTHING = 0.2;
/** The long-term latency is an average over about this many windows. */
const LONG_WINDOWS = 100;
/** A window closes once it is this old and holds at least MIN_SAMPLES latencies. */
export const WINDOW_MS = 100;
const MIN_SAMPLES = 10;

/**
 * A concurrency limit that follows the latency of the work it admits, in the manner of Netflix's
 * concurrency-limits Gradient2: per window, the gradient long-term ÷ short-term latency
 * (times a tolerance, between 0.5 and 1) scales the limit, plus a headroom of √limit that lets it
 * probe upwards. Queueing anywhere behind admission (the database pool, the event loop) raises the
 * short-term latency and lowers the limit; a latency that stays high becomes the new baseline
 * only slowly, and the baseline falls quickly once latency drops (the re-learning). While less
 * than half the limit is in use the limit does not grow: an idle service has no evidence that
 * more would be served well.
 */
export class GradientLimit {
  private current: number;
  private longMs = 0;
  private windowStart = 0;
  private windowSum = 0;
  private windowCount = 0;
  private windowMaxInFlight = 0;

  constructor(private readonly settings: GradientLimitSettings) {
    this.current = settings.initial;
  }

  /** The limit now, a whole number. */
  get limit(): number {
    return Math.floor(this.current);
  }

  /** One admitted unit of work ended after `latencyMs`, with `inFlight` in flight at its start. */
  sample(latencyMs: number, inFlight: number, nowMs: number): void {
    if (this.windowCount === 0) this.windowStart = nowMs;
    this.windowSum += latencyMs;
    this.windowCount++;
    if (inFlight > this.windowMaxInFlight) this.windowMaxInFlight = inFlight;
    if (this.windowCount >= MIN_SAMPLES && nowMs - this.windowStart >= WINDOW_MS) {
      this.update(this.windowSum / this.windowCount, this.windowMaxInFlight);
      this.windowSum = 0;
      this.windowCount = 0;
      this.windowMaxInFlight = 0;
    }
  }

  private update(shortMs: number, maxInFlight: number): void {
    if (this.longMs === 0) {
      this.longMs = shortMs;
      return;
    }
    this.longMs += (shortMs - this.longMs) / LONG_WINDOWS;
    // A baseline far above today's latency (a slow period that ended) is pulled down fast.
    if (this.longMs / shortMs > 2) this.longMs *= 0.95;
    // Little use of the limit: no evidence either way, and no growth.
    if (maxInFlight < this.current / 2) return;
    const gradient = Math.max(0.5, Math.min(1, (TOLERANCE * this.longMs) / shortMs));
    const estimate = this.current * gradient + Math.sqrt(this.current);
    const next = this.current * (1 - SMOOTHING) + estimate * SMOOTHING;
    this.current = Math.max(this.settings.min, Math.min(this.settings.max, next));
  }
}
