import { setTimeout as sleep } from 'node:timers/promises';
import { isFinalFailure } from './database-client.js';
import { databaseCounters } from './database-counters.js';
import { isPrimaryAway } from './database-errors.js';
import type { TransactionScope } from './transaction-scope.js';

/** The first retry waits this long; each further one doubles it. */
export const FAILOVER_RETRY_BASE_MS = 100;
/** The longest wait between two attempts. */
export const FAILOVER_RETRY_MAX_MS = 1000;

/**
 * True when `error` says the primary went away, is not reachable yet, or is read-only for now
 * (isPrimaryAway: the table of src/database/database-errors.ts), so that the same work may succeed
 * on a fresh connection a moment later. The connection gate's refusal while attempts back off
 * carries the code of the failure behind it, so it counts when that failure does.
 *
 * Never a final failure (isFinalFailure: a statement that outlived the statement timeout),
 * a full pool (an overload, which a retry would only prolong), too many connections, lock or
 * serialization failures, or any error of a query itself.
 */
export function isFailoverError(error: unknown): boolean {
  return !isFinalFailure(error) && isPrimaryAway(error);
}

/**
 * How long to wait before retry number `retry` (0 for the first): 100 ms doubling up to 1 s,
 * drawn between half and all of that so that the requests of many processes do not retry in step.
 */
export function failoverRetryDelay(retry: number, random: () => number = Math.random): number {
  const ceiling = Math.min(
    FAILOVER_RETRY_MAX_MS,
    FAILOVER_RETRY_BASE_MS * 2 ** Math.min(retry, 16),
  );
  return ceiling * (0.5 + random() / 2);
}

export interface FailoverRetryOptions {
  /**
   * A retry may start until this long after the first attempt started (DB_FAILOVER_RETRY_MS);
   * 0: no retry at all.
   */
  budgetMs: number;
  /** True once nobody waits for the answer (the client disconnected): no further attempt. */
  abandoned?: () => boolean;
  /** Told of each failure that is about to be retried (after its back-off), for the log. */
  onRetry?: (error: unknown, retry: number) => void;
  now?: () => number;
  random?: () => number;
  wait?: (ms: number) => Promise<unknown>;
}

/**
 * Runs `work` and, while it fails with a failover error (isFailoverError), runs it again from the
 * start after a short back-off (failoverRetryDelay), until it succeeds, fails otherwise, the
 * budget is spent or the caller is gone; then the last error is thrown as it was.
 *
 * Only for work that is safe to run twice: a whole keyed create (write, key and stored outcome in
 * one transaction). If a COMMIT whose outcome was unknown did land, the retry's key meets the
 * stored one, so the retry is undone and replays the stored outcome; if not, the retry creates. An
 * unkeyed write has no such guard and must never be retried here.
 */
export async function retryOnFailover<T>(
  work: () => Promise<T>,
  {
    budgetMs,
    abandoned = () => false,
    onRetry = () => {},
    now = Date.now,
    random = Math.random,
    wait = sleep,
  }: FailoverRetryOptions,
): Promise<T> {
  const deadline = now() + budgetMs;
  for (let retry = 0; ; retry++) {
    try {
      return await work();
    } catch (error) {
      const left = deadline - now();
      if (left <= 0 || !isFailoverError(error) || abandoned()) throw error;
      await wait(Math.min(left, failoverRetryDelay(retry, random)));
      if (abandoned()) throw error;
      databaseCounters.failoverRetries++;
      onRetry(error, retry);
    }
  }
}

/**
 * `scope` whose run() reruns the whole transaction on a fresh connection while it fails with a
 * failover error (retryOnFailover): for keyed creates only. A wait between two attempts ends early
 * when the primary's pool reconnects, or when its connection gate lets the next attempt through
 * (ConnectionGate#waitToRetry), so a switchover costs little more than the HA system's own time.
 */
export function retryingOnFailover(
  scope: Pick<TransactionScope, 'run' | 'connectionGate'>,
  options: FailoverRetryOptions,
): Pick<TransactionScope, 'run'> {
  const wait = (ms: number) => scope.connectionGate?.waitToRetry(ms) ?? sleep(ms);
  return {
    run: (work) => retryOnFailover(() => scope.run(work), { wait, ...options }),
  };
}
