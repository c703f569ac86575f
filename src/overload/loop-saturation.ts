import { performance } from 'node:perf_hooks';
import type { WorkClass } from './work-class.js';

/** How often the event loop's utilisation is read. */
export const SATURATION_WINDOW_MS = 100;
/** Saturated windows in a row before anything is shed: a single one may be a pause, not load. */
const CONFIRMING_WINDOWS = 2;
/** Each saturated window after those multiplies the share of new work admitted by this… */
const DECREASE = 0.75;
/** …and each window below the threshold adds this back, up to all of it. */
const INCREASE = 0.05;
/** Some new work is always admitted, so that the service keeps serving and measuring. */
const FLOOR = 0.02;
/** A class of weight w is admitted with probability share ** (1 / w): the feed goes first. */
const WEIGHT: Record<WorkClass, number> = { feed: 0.5, list: 0.75, read: 0.9, write: 1 };

/**
 * The event loop's own saturation, which the concurrency limit cannot see (docs/overload.md,
 * "Where it stands"). Past capacity, an open loop's callers give up and come back on new
 * connections, which wait in the listen socket's accept queue before the process hears of them.
 * Once accepted, each finds few requests in flight and is admitted, though its caller may have
 * gone: the loop stays busy with such requests, accepts late, and the queue never drains.
 *
 * So while the loop runs more than `busy` of each 100 ms window (two windows in a row), only a
 * share of new work is admitted: a quarter less per saturated window, 5 points more per window
 * below it (additive increase, multiplicative decrease). The rest is rejected at once, which
 * costs a fraction of serving it, so the loop keeps idle time, accepts connections as fast as
 * they come, and what it admits is fresh.
 */
export class LoopSaturation {
  private admitted = 1;
  private saturatedInARow = 0;
  private last = performance.eventLoopUtilization();
  private timer?: NodeJS.Timeout;

  /**
   * `busy`: the utilisation above which a window is saturated (1: never, nothing is shed).
   * `utilisation` reads one window's utilisation (the loop's since the last read, by default).
   */
  constructor(
    private readonly busy: number,
    private readonly utilisation: () => number = () => this.measure(),
    private readonly random: () => number = Math.random,
  ) {}

  /** The share of new work admitted now, between 0.02 and 1. */
  get share(): number {
    return this.admitted;
  }

  /** Reads the loop every window (an unref'd timer); nothing to read when it never sheds. */
  start(): void {
    if (this.busy >= 1) return;
    this.timer ??= setInterval(() => this.tick(), SATURATION_WINDOW_MS).unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /** One window's end: adjusts the admitted share from the window's utilisation. */
  tick(): void {
    if (this.utilisation() > this.busy) {
      this.saturatedInARow++;
      if (this.saturatedInARow >= CONFIRMING_WINDOWS) {
        this.admitted = Math.max(FLOOR, this.admitted * DECREASE);
      }
    } else {
      this.saturatedInARow = 0;
      this.admitted = Math.min(1, this.admitted + INCREASE);
    }
  }

  /** Whether new work of `workClass` may start now. */
  admits(workClass: WorkClass): boolean {
    if (this.admitted >= 1) return true;
    return this.random() < this.admitted ** (1 / WEIGHT[workClass]);
  }

  private measure(): number {
    const now = performance.eventLoopUtilization();
    const window = performance.eventLoopUtilization(now, this.last);
    this.last = now;
    return window.utilization;
  }
}
