/** The first retry after a failed connection attempt waits this long; each further failure doubles it. */
export const CONNECT_BACKOFF_BASE_MS = 100;
/** The longest wait between two attempts while the database stays unreachable. */
export const CONNECT_BACKOFF_MAX_MS = 1000;

/**
 * Connection attempts of one pool, limited while its database is unreachable. Without it every
 * request, readiness probe and lag check opens a socket of its own: a process was measured opening
 * about 10,000 connections a second against a stopped primary behind a proxy that accepts and
 * closes (HAProxy without a backend), load that lands on whichever node comes back first.
 *
 * After a failed attempt the next one may start only after a delay (100 ms, doubling up to 1 s,
 * each drawn at random between half and all of it so that many processes do not retry in step),
 * and only one attempt at a time runs until one succeeds. Everything else fails at once with the
 * last failure's code, so requests answer 503 without waiting for a connect timeout. A process
 * therefore opens at most about 10 connections in the first second of an outage and then at
 * most 2 a second per pool, and reconnects within about a second of the database coming back.
 */
export class ConnectionGate {
  private failures = 0;
  private nextAttemptAt = 0;
  private probing = false;
  private lastError?: Error & { code?: string };
  /** When a pooled connection last broke (a query failed with a connection error). */
  lostAt = 0;
  /** Callers of waitToRetry() still waiting. */
  private readonly waiting = new Set<Waiter>();

  constructor(
    private readonly now: () => number = Date.now,
    private readonly random: () => number = Math.random,
  ) {}

  /** True while the last attempt failed and none has succeeded since. */
  get failing(): boolean {
    return this.failures > 0;
  }

  /**
   * Call before opening a connection: undefined lets the attempt go ahead (then report its
   * end with succeeded() or failed()), an error refuses it without touching the network.
   */
  attempt(): Error | undefined {
    if (this.failures === 0) return undefined;
    if (this.probing || this.now() < this.nextAttemptAt) {
      const last = this.lastError;
      return Object.assign(
        new Error('database connection attempts are backing off after a failed attempt', {
          cause: last,
        }),
        // The cause's code keeps the error's meaning (ECONNREFUSED: unavailable); 08001 is
        // SQLSTATE "unable to establish connection" for a failure without a code.
        { code: last?.code ?? '08001' },
      );
    }
    this.probing = true;
    return undefined;
  }

  succeeded(): void {
    this.failures = 0;
    this.probing = false;
    this.lastError = undefined;
    for (const waiter of [...this.waiting]) waiter.wake();
  }

  failed(error: unknown): void {
    this.failures += 1;
    this.probing = false;
    this.lastError = error as Error & { code?: string };
    const delay = Math.min(
      CONNECT_BACKOFF_MAX_MS,
      CONNECT_BACKOFF_BASE_MS * 2 ** Math.min(this.failures - 1, 16),
    );
    this.nextAttemptAt = this.now() + delay * (0.5 + this.random() / 2);
    for (const waiter of this.waiting) waiter.schedule();
  }

  /**
   * Resolves after `ms`, or sooner: as soon as a connection attempt succeeds, or, while attempts
   * back off, when the next one may start (moved along when an attempt fails meanwhile). For work
   * retried after a failover error: it runs again as soon as the database may answer, instead of
   * sleeping through a back-off that a reconnect already ended, and its attempt may be the one
   * that probes. A refused attempt costs no connection, so waking every waiter at once is cheap.
   */
  waitToRetry(ms: number): Promise<void> {
    const deadline = this.now() + ms;
    return new Promise((resolve) => {
      let timer: NodeJS.Timeout | undefined;
      const waiter: Waiter = {
        wake: () => {
          clearTimeout(timer);
          this.waiting.delete(waiter);
          resolve();
        },
        schedule: () => {
          clearTimeout(timer);
          const at =
            this.failures > 0 && !this.probing ? Math.min(deadline, this.nextAttemptAt) : deadline;
          timer = setTimeout(waiter.wake, Math.max(0, at - this.now()));
        },
      };
      this.waiting.add(waiter);
      waiter.schedule();
    });
  }

  /** A connection in use broke: what readiness last saw may be out of date. */
  lost(): void {
    this.lostAt = this.now();
  }
}

interface Waiter {
  wake(): void;
  /** (Re)arms the timer: at the waiter's deadline, or sooner when the next attempt may start. */
  schedule(): void;
}
