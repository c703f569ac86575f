// Load for the failover test that lists users throughout a fault: one worker sends
// `GET /users?limit=5` (read from the replicas of DATABASE_READ_URLS), paced, each with a deadline,
// and records when each was sent and how it ended, so that the lists answered while the primary
// was away can be counted and every failure named.

export interface ListAnswer {
  /** Date.now() when the request was sent. */
  at: number;
  /** The HTTP status, or how the request failed. */
  outcome: number | 'timeout' | 'error';
}

export interface ListLoad {
  /** The answers that were not 200 among those sent in [from, to]. */
  failures(from: number, to: number): ListAnswer[];
  /** How many were answered 200 among those sent in [from, to]. */
  answered(from: number, to: number): number;
  stop(): Promise<void>;
}

/** Pacing between two lists: a steady trickle, not a load test. */
const PACE_MS = 50;

export function startListLoad({
  baseUrl,
  attemptTimeoutMs,
}: {
  baseUrl: string;
  attemptTimeoutMs: number;
}): ListLoad {
  const answers: ListAnswer[] = [];
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      const at = Date.now();
      try {
        const response = await fetch(`${baseUrl}/users?limit=5`, {
          signal: AbortSignal.timeout(attemptTimeoutMs),
        });
        await response.arrayBuffer();
        answers.push({ at, outcome: response.status });
      } catch (error) {
        answers.push({
          at,
          outcome: (error as Error).name === 'TimeoutError' ? 'timeout' : 'error',
        });
      }
      await new Promise((resolve) => setTimeout(resolve, PACE_MS));
    }
  })();
  const within = (from: number, to: number) => answers.filter((a) => a.at >= from && a.at <= to);
  return {
    failures: (from, to) => within(from, to).filter((a) => a.outcome !== 200),
    answered: (from, to) => within(from, to).filter((a) => a.outcome === 200).length,
    async stop() {
      stopped = true;
      await loop;
    },
  };
}
