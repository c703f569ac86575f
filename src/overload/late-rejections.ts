/** A caller asking again within this long of a rejection ignored its Retry-After. */
const ASKED_AGAIN_WITHIN_MS = 100;
/** Granularity of the release of held rejections. */
const TICK_MS = 20;

/**
 * Rejections answered late to callers that come straight back: a caller that sends again within
 * 100 ms of a rejection (a closed-loop flood, a retry loop ignoring Retry-After) gets its next
 * rejection only once the previous one's Retry-After has passed. Such callers would otherwise
 * spin, each rejection sent back at once costing the event loop again, so the work admitted
 * waits behind thousands of refusals a second; held, they cost a timer entry. A caller that
 * honours Retry-After, or a new one, is answered at once, and so is every caller while
 * `maxHeld` answers are held.
 *
 * `key` is what identifies the caller: an HTTP connection, or a gRPC peer.
 */
export class LateRejections {
  private readonly lastRejected = new Map<unknown, number>();
  /** Held answers by the tick they are due in. */
  private readonly held = new Map<number, (() => void)[]>();
  private heldCount = 0;
  private timer?: NodeJS.Timeout;
  private lastPrune = 0;

  /**
   * `maxHeld` bounds what holding costs: the memory of the answers held, and, for a client that
   * sends on a pool of connections rather than waiting on each, the connections they occupy.
   */
  constructor(
    private readonly retryAfterMs: number,
    private readonly maxHeld: number,
  ) {}

  /** Sends `answer` now, or once `key`'s previous rejection is `retryAfterMs` old. */
  answer(key: unknown, answer: () => void): void {
    const now = performance.now();
    if (now - this.lastPrune > this.retryAfterMs) this.prune(now);
    const last = this.lastRejected.get(key);
    if (
      last === undefined ||
      now - last >= ASKED_AGAIN_WITHIN_MS ||
      this.heldCount >= this.maxHeld
    ) {
      this.lastRejected.set(key, now);
      answer();
      return;
    }
    const due = last + this.retryAfterMs;
    this.lastRejected.set(key, due);
    this.heldCount++;
    const tick = Math.ceil(due / TICK_MS);
    const bucket = this.held.get(tick);
    if (bucket) bucket.push(answer);
    else this.held.set(tick, [answer]);
    if (!this.timer) {
      this.timer = setInterval(() => this.release(performance.now()), TICK_MS);
      // Held answers never keep a stopping process alive: their connections close with it.
      this.timer.unref();
    }
  }

  private release(now: number): void {
    const current = now / TICK_MS;
    for (const [tick, answers] of this.held) {
      if (tick > current) continue;
      this.held.delete(tick);
      this.heldCount -= answers.length;
      for (const answer of answers) answer();
    }
    if (this.held.size === 0) {
      clearInterval(this.timer);
      this.timer = undefined;
    }
  }

  /** Forgets callers whose last rejection is long past. */
  private prune(now: number): void {
    this.lastPrune = now;
    for (const [key, at] of this.lastRejected) {
      if (now - at > this.retryAfterMs) this.lastRejected.delete(key);
    }
  }
}
