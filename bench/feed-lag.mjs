// `npm run bench -- --feed`, part 3: the lag from a write's commit to a consumer long-polling
// the service (GET /users/changes?wait=30, from a list's Changes-Token), at 500 writes/s. The
// writes are single UPDATEs of random users from four connections, paced in 10 ms ticks; a
// write's commit time is when its statement returned, the event's arrival when the consumer's
// page did, both on this process's clock.
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { fmt, table } from './format.mjs';

const RATE = 500;
const TICK_MS = 10;
const CONNECTIONS = 4;

const percentile = (sorted, p) =>
  sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * p) - 1)];

/**
 * A consumer starting where a client that lists the users starts, from the list's
 * `Changes-Token`; records when each event arrived.
 */
function consume(base, arrivals, stop) {
  return (async () => {
    const list = await fetch(`${base}/users?limit=1`);
    await list.arrayBuffer();
    let after = `&after=${list.headers.get('changes-token')}`;
    try {
      while (!stop.signal.aborted) {
        const res = await fetch(`${base}/users/changes?limit=1000&wait=30${after}`, {
          signal: stop.signal,
        });
        const body = await res.json();
        const now = performance.now();
        for (const event of body.events) arrivals.set(event.id, now);
        after = `&after=${body.next}`;
      }
    } catch (error) {
      // Stopped in the middle of a long poll.
      if (!stop.signal.aborted) throw error;
    }
  })();
}

/**
 * Writes at RATE per second for `durationS` against the database at `url` while a consumer
 * follows the service `target`; resolves with a row of lagTable (without its first cell).
 */
export async function feedLag(url, target, { durationS, log }) {
  // A pool queues the writes its connections cannot take yet; one client would be asked twice.
  const pool = new pg.Pool({
    connectionString: url,
    max: CONNECTIONS,
    application_name: 'bench-feed-lag',
  });
  const { rows } = await pool.query('SELECT id FROM users');
  const ids = rows.map((row) => row.id);
  const commits = new Map();
  const arrivals = new Map();
  const stop = new AbortController();
  const consumer = consume(target.url, arrivals, stop);
  await sleep(500);
  const writes = [];
  // Every name unique across runs: an UPDATE that sets the name a user already has changes
  // nothing, so it makes no event (and keeps the version), and would be counted as lost.
  const run = `${process.pid}.${Date.now()}`;
  const started = performance.now();
  const perTick = (RATE * TICK_MS) / 1000;
  for (let tick = 0; performance.now() - started < durationS * 1000; tick++) {
    for (let i = 0; i < perTick; i++) {
      const id = ids[Math.floor(Math.random() * ids.length)];
      writes.push(
        pool
          .query('UPDATE users SET name = $2 WHERE id = $1 RETURNING id, version', [
            id,
            `lag ${run}.${tick}.${i}`,
          ])
          .then(({ rows: [row] }) => {
            if (row) commits.set(`${row.id}.${row.version}`, performance.now());
          }),
      );
    }
    // Paced against the clock, so a slow tick does not lower the rate.
    await sleep(Math.max(0, started + (tick + 1) * TICK_MS - performance.now()));
  }
  await Promise.all(writes);
  const rate = Math.round(commits.size / ((performance.now() - started) / 1000));
  const deadline = performance.now() + 10_000;
  while ([...commits.keys()].some((key) => !arrivals.has(key)) && performance.now() < deadline) {
    await sleep(50);
  }
  stop.abort();
  await consumer;
  await pool.end();
  const lags = [...commits]
    .filter(([key]) => arrivals.has(key))
    .map(([key, at]) => arrivals.get(key) - at)
    .sort((a, b) => a - b);
  const missing = commits.size - lags.length;
  log(`lag at ${rate} writes/s: ${lags.length} events matched, ${missing} missing`);
  return [
    String(commits.size),
    String(rate),
    fmt(percentile(lags, 0.5), 1),
    fmt(percentile(lags, 0.9), 1),
    fmt(percentile(lags, 0.99), 1),
    fmt(lags.at(-1), 1),
    String(missing),
  ];
}

/** The lag's table: one row per CHANGES_POLL_INTERVAL_MS measured. */
export function lagTable(rows) {
  return table(
    [
      'poll interval ms',
      'writes',
      'writes/s',
      'p50 ms',
      'p90 ms',
      'p99 ms',
      'max ms',
      'not delivered',
    ],
    rows,
  );
}
