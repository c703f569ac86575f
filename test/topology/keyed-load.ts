// Load for the failover test: workers alternate a keyed create (POST /users with an
// Idempotency-Key, the key in the user's name, retried with the same key until 201, bounded in
// attempts and time) and a read of a user created earlier. Every attempt is recorded, so the test
// can say what a failover cost: failed attempts, the longest stall, the time to recovery.

export interface Attempt {
  kind: 'create' | 'read';
  sentAt: number;
  doneAt: number;
  /** HTTP status, or the client-side failure (`timeout`, `ECONNRESET`, …). */
  status: number | string;
  ok: boolean;
}

export interface Create {
  key: string;
  attempts: number;
  /** Set once a 201 came back: the user's id and when. */
  id?: number;
  ackedAt?: number;
  /** The bound on attempts or time was reached without a 201. */
  gaveUp?: boolean;
}

export interface LoadOptions {
  baseUrl: string;
  /** Prefix of every key and user name, unique per run. */
  prefix: string;
  workers?: number;
  maxCreateAttempts?: number;
  maxCreateMs?: number;
  attemptTimeoutMs?: number;
  /** Hard stop for the whole load, whatever the test waits for. */
  maxLoadMs?: number;
}

export interface LoadFigures {
  creates: number;
  acknowledged: number;
  gaveUp: number;
  failedCreateAttempts: number;
  failedReads: number;
  /** Reads of an acknowledged user answered 404. */
  readsNotFound: number;
  /** Failed attempts (creates and reads) by HTTP status or client-side failure. */
  failuresByStatus: Record<string, number>;
  /** Longest time without any successful request, from `since` on (ms). */
  stallMs: number;
  /** From `since` to the first success that ended that stall (ms). */
  recoveryMs: number;
}

const nextTick = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export function startKeyedLoad({
  baseUrl,
  prefix,
  workers = 4,
  maxCreateAttempts = 400,
  maxCreateMs = 60_000,
  attemptTimeoutMs = 10_000,
  maxLoadMs = 150_000,
}: LoadOptions) {
  const attempts: Attempt[] = [];
  const creates: Create[] = [];
  const acked: Create[] = [];
  const started = Date.now();
  let stopping = false;
  const running = () => !stopping && Date.now() - started < maxLoadMs;

  const request = async (kind: Attempt['kind'], path: string, init: RequestInit) => {
    const sentAt = Date.now();
    let status: number | string;
    let body: { id?: number } | undefined;
    try {
      const response = await fetch(`${baseUrl}${path}`, {
        ...init,
        signal: AbortSignal.timeout(attemptTimeoutMs),
      });
      status = response.status;
      body = (await response.json().catch(() => undefined)) as { id?: number } | undefined;
    } catch (error) {
      const cause = (error as { cause?: { code?: string } }).cause;
      status = cause?.code ?? (error as Error).name;
    }
    const ok = status === (kind === 'create' ? 201 : 200);
    attempts.push({ kind, sentAt, doneAt: Date.now(), status, ok });
    return { status, body, ok };
  };

  const create = async (key: string) => {
    const entry: Create = { key, attempts: 0 };
    creates.push(entry);
    const first = Date.now();
    while (entry.attempts < maxCreateAttempts && Date.now() - first < maxCreateMs) {
      entry.attempts++;
      const reply = await request('create', '/users', {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'idempotency-key': key },
        body: JSON.stringify({ name: key }),
      });
      if (reply.ok) {
        entry.id = reply.body?.id;
        entry.ackedAt = Date.now();
        acked.push(entry);
        return;
      }
      // A short pause before the same request again, as a client's retry policy has: without
      // it a worker would spin on instant 503s while the database is away.
      await nextTick(50);
    }
    entry.gaveUp = true;
  };

  const worker = async (w: number) => {
    for (let i = 0; running(); i++) {
      await create(`${prefix}-w${w}-${i}`);
      const known = acked[Math.floor(Math.random() * acked.length)];
      if (known?.id !== undefined && running()) {
        await request('read', `/users/${known.id}`, { method: 'GET' });
      }
    }
  };
  const done = Promise.all(Array.from({ length: workers }, (_, w) => worker(w)));

  return {
    creates,
    attempts,
    /** Creates acknowledged from `since` on. */
    ackedSince: (since: number) => acked.filter((c) => (c.ackedAt ?? 0) >= since).length,
    async stop() {
      stopping = true;
      await done;
    },
    figures(since: number): LoadFigures {
      const successes = attempts
        .filter((a) => a.ok && a.doneAt >= since)
        .map((a) => a.doneAt)
        .sort((a, b) => a - b);
      let stallMs = 0;
      let recoveryMs = 0;
      let previous = since;
      for (const at of successes) {
        if (at - previous > stallMs) {
          stallMs = at - previous;
          recoveryMs = at - since;
        }
        previous = at;
      }
      return {
        creates: creates.length,
        acknowledged: acked.length,
        gaveUp: creates.filter((c) => c.gaveUp).length,
        failedCreateAttempts: attempts.filter((a) => a.kind === 'create' && !a.ok).length,
        failedReads: attempts.filter((a) => a.kind === 'read' && !a.ok).length,
        readsNotFound: attempts.filter((a) => a.kind === 'read' && a.status === 404).length,
        failuresByStatus: attempts
          .filter((a) => !a.ok)
          .reduce<Record<string, number>>(
            (counts, a) => ({ ...counts, [a.status]: (counts[a.status] ?? 0) + 1 }),
            {},
          ),
        stallMs,
        recoveryMs,
      };
    },
  };
}
