// The change feed under load and faults: 100,000 changes from 16 SQL writers with waits inside
// their transactions and one HTTP writer through the built service, followed by two consumers
// (HTTP long polls), while the service is killed with SIGKILL and restarted, and PostgreSQL is
// stopped immediately (a crash) and started again. At the end every committed change reached
// every consumer, each user's versions came in order, and a replay from the start rebuilds the
// users table exactly. A cluster of its own, so the crash touches no other spec.
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import {
  startThrowawayPostgres,
  stopImmediately,
  type ThrowawayPostgres,
} from '../../scripts/lib/embedded-pg.mjs';
import {
  type ChangeKey,
  FeedConsumer,
  HttpWriter,
  replay,
  SqlWriters,
} from '../support/feed-load.js';
import {
  buildService,
  type ServiceProcess,
  startService,
  waitFor,
  waitUntilReady,
} from '../support/service-process.js';

const CHANGES = 100_000;
const WRITERS = 16;
/** Bounds of the whole run: writing, then the consumers catching up. */
const WRITE_DEADLINE_MS = 240_000;
const CATCH_UP_MS = 60_000;

describe('change feed under load, a killed service and a crashed database (e2e)', () => {
  let cluster: ThrowawayPostgres;
  let url: string;
  let service: ServiceProcess | undefined;
  const env = () => ({
    DATABASE_URL: url,
    MIGRATE_ON_BOOT: 'true',
    LOG_LEVEL: 'warn',
    SHUTDOWN_DRAIN_MS: '0',
    CHANGES_PURGE_INTERVAL_MS: '0',
    CHANGES_POLL_INTERVAL_MS: '100',
    DB_CONNECT_TIMEOUT_MS: '1000',
  });

  beforeAll(async () => {
    buildService();
    cluster = await startThrowawayPostgres({
      prefix: 'users-feed-faults-pg-',
      database: 'feed_faults',
      persistent: true,
      postgresFlags: ['-c', 'max_connections=200', '-c', 'deadlock_timeout=100ms'],
    });
    url = cluster.url!;
  });

  afterAll(async () => {
    await service?.stop();
    await cluster?.stop();
  });

  it('delivers every committed change to every consumer, in order, through SIGKILL and a database crash', async () => {
    const started = Date.now();
    service = await startService(env());
    await waitUntilReady(service);
    const base = () => service!.url;

    const sql = new SqlWriters(url, WRITERS);
    const http = new HttpWriter(base);
    const consumers = [new FeedConsumer(base), new FeedConsumer(base)];
    const written = () => sql.acknowledged.size + http.acknowledged.size;
    const delivered = () => Math.min(...consumers.map((c) => c.keys().size));
    const until = (what: string, check: () => boolean) =>
      waitFor(what, () => Promise.resolve(check()), WRITE_DEADLINE_MS - (Date.now() - started));
    sql.start();
    http.start();
    for (const consumer of consumers) consumer.start();
    const timeline: string[] = [];
    const mark = (what: string) =>
      timeline.push(
        `${((Date.now() - started) / 1000).toFixed(1)} s ${what}: ${written()} written, ${delivered()} delivered`,
      );

    try {
      await until(
        'a third of the changes, followed',
        () => written() >= CHANGES / 3 && delivered() > 1000,
      );
      mark('SIGKILL of the service');
      service.child.kill('SIGKILL');
      await service.exited;
      service = await startService(env());
      await waitUntilReady(service);
      mark('service restarted');

      await until('two thirds of the changes', () => written() >= (2 * CHANGES) / 3);
      mark('immediate stop of PostgreSQL');
      await stopImmediately(cluster.server);
      await sleep(1000);
      await cluster.server.start();
      mark('PostgreSQL started (crash recovery done)');

      await until('all the changes', () => written() >= CHANGES);
      mark('writers stopping');
    } finally {
      await sql.stop();
      await http.stop();
    }

    // The truth: every event that committed, as the database holds it.
    const db = new pg.Client({ connectionString: url });
    await db.connect();
    let committed: Set<ChangeKey>;
    let table: Map<number, number>;
    let inversions: number;
    try {
      const events = await db.query<{ key: string }>(
        `SELECT user_id || '.' || version AS key FROM user_changes`,
      );
      committed = new Set(events.rows.map((row) => row.key));
      const users = await db.query<{ id: number; version: number }>(
        'SELECT id, version FROM users',
      );
      table = new Map(users.rows.map((row) => [row.id, row.version]));
      // Events placed after the user's previous event rather than at their own xid: the load
      // made writers with a smaller xid change a user after one with a larger xid.
      const inverted = await db.query<{ n: number }>(
        'SELECT count(*)::int AS n FROM user_changes WHERE position > xid',
      );
      inversions = inverted.rows[0].n;
    } finally {
      await db.end();
    }
    await waitFor(
      'the consumers to catch up',
      () => Promise.resolve(consumers.every((c) => c.keys().size >= committed.size)),
      CATCH_UP_MS,
    ).finally(() => Promise.all(consumers.map((c) => c.stop())));
    mark('consumers caught up');

    const missing = (keys: Set<ChangeKey>, from: Set<ChangeKey>) =>
      [...from].filter((key) => !keys.has(key)).slice(0, 10);
    // Every acknowledged commit is in the database, and the database holds nothing else.
    expect(missing(committed, new Set([...sql.acknowledged, ...http.acknowledged]))).toEqual([]);
    expect(committed.size).toBeGreaterThanOrEqual(CHANGES);
    expect(inversions).toBeGreaterThan(0);
    for (const consumer of consumers) {
      expect(consumer.refusals).toEqual([]);
      const keys = consumer.keys();
      expect(missing(keys, committed)).toEqual([]);
      expect(missing(committed, keys)).toEqual([]);
      const { disorder, users } = replay(consumer.arrived);
      expect(disorder.slice(0, 10)).toEqual([]);
      expect(users).toEqual(table);
    }

    // A consumer starting from the beginning now rebuilds the same table.
    const fresh = new FeedConsumer(base);
    fresh.start();
    await waitFor(
      'a replay from the start',
      () => Promise.resolve(fresh.keys().size >= committed.size),
      CATCH_UP_MS,
    ).finally(() => fresh.stop());
    expect(replay(fresh.arrived).users).toEqual(table);

    const elapsed = (Date.now() - started) / 1000;
    console.log(
      [
        `change feed under faults: ${committed.size} changes (${http.acknowledged.size} through HTTP), ` +
          `${table.size} users left, in ${elapsed.toFixed(1)} s`,
        ...timeline,
        `events ordered after a larger xid's (the inversion): ${inversions}`,
        `SQL transactions failed and dropped: ${sql.failures}`,
        ...consumers.map(
          (c, i) =>
            `consumer ${i + 1}: ${c.arrived.length} events received, ` +
            `${replay(c.arrived).duplicates} duplicates, ${c.errors} failed polls`,
        ),
      ].join('\n'),
    );
  }, 420_000);
});
