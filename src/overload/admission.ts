import type { OverloadSettings } from '../config/app-config.js';
import { GradientLimit } from './gradient-limit.js';
import type { RejectReason, WorkClass } from './work-class.js';

/** One request or call waiting for admission, as its transport presents it. */
export interface AdmissionRequest {
  readonly workClass: WorkClass;
  /** `performance.now()` after which its caller no longer wants an answer; Infinity: no deadline. */
  readonly deadline: number;
  /** True once its caller has gone (closed the connection, cancelled the call). */
  gone(): boolean;
  /** Admitted: start the work, and call `done` exactly once when it has ended. */
  admit(done: () => void): void;
  /** Turned away: answer (or, for a caller gone, only count) without doing any of the work. */
  reject(reason: RejectReason): void;
}

/** The share of the limit each class may fill before it waits: lists give way first. */
const SHARE: Record<WorkClass, number> = { feed: 0.5, list: 0.75, read: 0.9, write: 1 };
/** Waiting classes in the order a free slot takes them. */
const DEQUEUE_ORDER = ['write', 'read', 'list'] as const;
type QueuedClass = (typeof DEQUEUE_ORDER)[number];
/** How often waiting requests are checked for an expired wait, a deadline or a caller gone. */
const SWEEP_MS = 5;

interface Waiter {
  request: AdmissionRequest;
  enqueuedAt: number;
  expiresAt: number;
}

/** What the metrics read (OverloadMetrics). */
export interface AdmissionStats {
  limit: number;
  inFlight: number;
  feedInFlight: number;
  queued: number;
}

/**
 * Admission before work, for both transports: a request starts only while fewer than the limit
 * are in flight (its class's share of it, so the feed, then lists, are turned away first), else
 * it waits in a short queue, else it is rejected at once. The queue is CoDel-like, as in
 * Facebook's "Fail at Scale": a request waits at most `queueTimeoutMs` while the queue drains,
 * but only a tenth of it once the queue has not been empty for that long (a standing queue is
 * overload, not a burst); then a free slot takes the newest waiter first (adaptive LIFO), whose
 * caller is the likeliest still to be there. Long polls and watch streams hold a slot of their
 * own (half the limit in all), start only while less than half the limit is in flight and are
 * never queued; their waits say nothing about load, so they
 * give the limit no latency sample. docs/overload.md says why, with the measurements.
 */
export class AdmissionController {
  private readonly gradient: GradientLimit;
  private inFlight = 0;
  private feedInFlight = 0;
  private readonly queues: Record<QueuedClass, Waiter[]> = { write: [], read: [], list: [] };
  private queued = 0;
  /** When the queue was last empty (performance.now()). */
  private lastEmpty = 0;
  private sweeper?: NodeJS.Timeout;
  /** Observes how long each admitted request waited (0 when it did not). */
  onWait: (waitedMs: number) => void = () => {};

  constructor(private readonly settings: OverloadSettings) {
    this.gradient = new GradientLimit(settings);
    this.lastEmpty = performance.now();
  }

  get limit(): number {
    return this.settings.mode === 'fixed' ? this.settings.max : this.gradient.limit;
  }

  get stats(): AdmissionStats {
    return {
      limit: this.limit,
      inFlight: this.inFlight,
      feedInFlight: this.feedInFlight,
      queued: this.queued,
    };
  }

  /** Admits, queues or rejects `request`; one whose caller has gone is never started. */
  offer(request: AdmissionRequest): void {
    const now = performance.now();
    if (request.gone()) return request.reject('client_gone');
    if (now >= request.deadline) return request.reject('deadline');
    const workClass = request.workClass;
    if (workClass === 'feed') return this.offerFeed(request);
    if (this.mayStart(workClass) && !this.queuedAtOrAbove(workClass)) {
      this.start(request, now, 0);
      return;
    }
    if (this.queued >= this.limit) return request.reject('limit');
    if (this.queued === 0) this.lastEmpty = now;
    const standing = now - this.lastEmpty > this.settings.queueTimeoutMs;
    const timeout = standing ? this.settings.queueTimeoutMs / 10 : this.settings.queueTimeoutMs;
    this.queues[workClass].push({ request, enqueuedAt: now, expiresAt: now + timeout });
    this.queued++;
    this.sweeper ??= setInterval(() => this.sweep(), SWEEP_MS);
  }

  private offerFeed(request: AdmissionRequest): void {
    const share = Math.max(1, Math.floor(this.limit * SHARE.feed));
    if (this.queued > 0 || this.feedInFlight >= share || !this.mayStart('feed')) {
      return request.reject('limit');
    }
    this.feedInFlight++;
    this.onWait(0);
    let ended = false;
    request.admit(() => {
      if (ended) return;
      ended = true;
      this.feedInFlight--;
    });
  }

  private mayStart(workClass: WorkClass): boolean {
    return this.inFlight < Math.max(1, Math.floor(this.limit * SHARE[workClass]));
  }

  /** True when a request of `workClass` or of a class shed after it is waiting. */
  private queuedAtOrAbove(workClass: QueuedClass): boolean {
    if (this.queued === 0) return false;
    for (const queuedClass of DEQUEUE_ORDER) {
      if (this.queues[queuedClass].length > 0) return true;
      if (queuedClass === workClass) return false;
    }
    return false;
  }

  private start(request: AdmissionRequest, now: number, waitedMs: number): void {
    this.inFlight++;
    const inFlightAtStart = this.inFlight;
    this.onWait(waitedMs);
    let ended = false;
    request.admit(() => {
      if (ended) return;
      ended = true;
      this.inFlight--;
      const end = performance.now();
      this.gradient.sample(end - now, inFlightAtStart, end);
      this.drain();
    });
  }

  /** Starts waiters while slots are free: writes first, then reads, then lists. */
  private drain(): void {
    if (this.queued === 0) return;
    const now = performance.now();
    const lifo = now - this.lastEmpty > this.settings.queueTimeoutMs;
    for (const workClass of DEQUEUE_ORDER) {
      const queue = this.queues[workClass];
      while (queue.length > 0 && this.mayStart(workClass)) {
        const waiter = lifo ? queue.pop()! : queue.shift()!;
        this.queued--;
        if (!this.settle(waiter, now)) this.start(waiter.request, now, now - waiter.enqueuedAt);
      }
      if (queue.length > 0) break;
    }
    if (this.queued === 0) this.stopSweeping(now);
  }

  /** Rejects a waiter that can no longer be served well: true when it did. */
  private settle(waiter: Waiter, now: number): boolean {
    const { request } = waiter;
    if (request.gone()) request.reject('client_gone');
    else if (now >= request.deadline) request.reject('deadline');
    else if (now >= waiter.expiresAt) request.reject('queue_timeout');
    else return false;
    return true;
  }

  private sweep(): void {
    const now = performance.now();
    for (const workClass of DEQUEUE_ORDER) {
      const queue = this.queues[workClass];
      const kept = queue.filter((waiter) => !this.settle(waiter, now));
      this.queued -= queue.length - kept.length;
      this.queues[workClass] = kept;
    }
    if (this.queued === 0) this.stopSweeping(now);
  }

  private stopSweeping(now: number): void {
    this.lastEmpty = now;
    clearInterval(this.sweeper);
    this.sweeper = undefined;
  }

  /** Stops the queue's timer (the app is closing). Waiting requests are rejected. */
  close(): void {
    for (const workClass of DEQUEUE_ORDER) {
      for (const waiter of this.queues[workClass]) waiter.request.reject('limit');
      this.queues[workClass] = [];
    }
    this.queued = 0;
    this.stopSweeping(performance.now());
  }
}
