import { Injectable, Logger, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import pg from 'pg';
import { isDatabaseUnavailable } from './database-errors.js';
import { AppConfig } from '../config/app-config.js';
import { poolOptions } from './database-options.js';
import { PrimaryPool, type Queryable } from './queryable.js';
import { queryConfig, reads, type Statement } from './statement.js';

const LAG_CHECK_INTERVAL_MS = 1000;

// The replica's delay behind the primary, not the age of its last transaction: 0 while it has
// replayed everything it received, else the time since the last transaction it replayed. And
// whether it is a standby at all: a promoted one is a primary of its own, whose rows may differ.
const LAG_SQL = reads(`SELECT CASE WHEN pg_last_wal_receive_lsn() = pg_last_wal_replay_lsn() THEN 0
  ELSE coalesce(extract(epoch FROM now() - pg_last_xact_replay_timestamp()) * 1000, 0) END::float8 AS "lagMs",
  pg_is_in_recovery() AS "standby"`);

interface Replica {
  /** host:port/database, for logs and metrics (never the password) */
  name: string;
  url: string;
  pool: pg.Pool;
  /** Its last check reached a server that is not a standby (logged once). */
  notStandby: boolean;
  /** Answered its last lag check. */
  up: boolean;
  lagMs: number;
  checking: boolean;
}

/**
 * The streaming replicas of DATABASE_READ_URLS, for the list endpoints and their totals. Plain pg
 * pools rather than TypeORM's `replication` option, which picks a replica at random and knows
 * nothing of one that is down or behind. A background check, once a second per replica, measures
 * its lag; a replica that is down or further behind than DB_REPLICA_MAX_LAG_MS is skipped, and
 * with none usable a list reads from the primary. A query that fails on a replica is run again
 * on the next one or the primary, so a replica outage never fails a request. A URL that reaches
 * a server out of recovery (a standby promoted by a failover, behind a proxy that routes to the
 * current standbys) is skipped too, and its connections are closed, so that the next ones are
 * routed anew.
 */
@Injectable()
export class ReadReplicas implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger(ReadReplicas.name);
  private readonly replicas: Replica[];
  /** The reader without replicas: the primary, counted like a fallback to it. */
  private readonly primaryReader: Queryable = {
    query: <Row>(sql: Statement, parameters?: unknown[]) => {
      this.reads.primary++;
      return this.primary.query<Row>(sql, parameters);
    },
  };
  private next = 0;
  private timer?: NodeJS.Timeout;
  /** List reads served so far, by pool (the metrics read these). */
  readonly reads = { primary: 0, replica: 0 };

  constructor(
    private readonly config: AppConfig,
    private readonly primary: PrimaryPool,
  ) {
    this.replicas = config.database.readUrls.map((url) => {
      const parsed = new URL(url);
      return {
        name: `${parsed.hostname}:${parsed.port || 5432}${parsed.pathname}`,
        url,
        pool: this.openPool(url),
        notStandby: false,
        up: false,
        lagMs: 0,
        checking: false,
      };
    });
  }

  /** A pool per replica, each with its own connection gate (see poolOptions). */
  private openPool(url: string): pg.Pool {
    const { connectTimeoutMs, poolSize } = this.config.database;
    const pool = new pg.Pool({
      connectionString: url,
      max: poolSize,
      connectionTimeoutMillis: connectTimeoutMs,
      application_name: 'users-service',
      ...poolOptions(this.config.database, { requireWritable: false }),
    });
    // An idle connection dropped by a replica going away must not crash the process.
    pool.on('error', () => {});
    return pool;
  }

  onModuleInit(): void {
    if (this.replicas.length === 0) return;
    this.checkAll();
    this.timer = setInterval(() => this.checkAll(), LAG_CHECK_INTERVAL_MS);
    this.timer.unref();
  }

  async onApplicationShutdown(): Promise<void> {
    clearInterval(this.timer);
    await Promise.all(this.replicas.map((replica) => replica.pool.end().catch(() => {})));
  }

  /**
   * A reader for one list request: its page and its total go to the same replica (the next
   * usable one in turn), falling back to the others and then the primary.
   */
  reader(): Queryable {
    if (this.replicas.length === 0) return this.primaryReader;
    const order = this.usableInTurn();
    return {
      query: <Row>(sql: Statement, parameters?: unknown[]) =>
        this.query<Row>(order, sql, parameters),
    };
  }

  /**
   * Runs `work` with a reader whose statements all go to one server: a connection of the next
   * usable replica, held for the work, else the primary. One server's snapshots only move
   * forward, so each statement sees at least what the ones before it saw; across servers there
   * is no such order (a replica may be behind the primary or another replica). When the replica
   * fails, the work runs again from its start on the next one, at last on the primary.
   */
  async onOneServer<T>(work: (db: Queryable) => Promise<T>): Promise<T> {
    for (const replica of this.usableInTurn()) {
      if (!replica.up) continue;
      let client: pg.PoolClient;
      try {
        client = await replica.pool.connect();
      } catch (error) {
        this.failed(replica, error);
        continue;
      }
      let broken: unknown;
      try {
        return await work({
          query: async <Row>(sql: Statement, parameters?: unknown[]) => {
            const { rows } = await client.query(queryConfig(sql, parameters));
            this.reads.replica++;
            return rows as Row[];
          },
        });
      } catch (error) {
        // The work's own errors (a bad cursor) are the request's; the server's are tried again.
        if (!(error instanceof pg.DatabaseError) && !isDatabaseUnavailable(error)) throw error;
        if (isDatabaseUnavailable(error)) broken = error;
        this.failed(replica, error);
      } finally {
        client.release(broken as Error | undefined);
      }
    }
    return work(this.primaryReader);
  }

  /** The usable replicas, starting with the next in turn. */
  private usableInTurn(): Replica[] {
    const usable = this.replicas.filter(
      (r) => r.up && r.lagMs <= this.config.database.replicaMaxLagMs,
    );
    const start = usable.length > 0 ? this.next++ % usable.length : 0;
    return [...usable.slice(start), ...usable.slice(0, start)];
  }

  private async query<Row>(
    order: Replica[],
    sql: Statement,
    parameters?: unknown[],
  ): Promise<Row[]> {
    for (const replica of order) {
      if (!replica.up) continue;
      try {
        const { rows } = await replica.pool.query(queryConfig(sql, parameters));
        this.reads.replica++;
        return rows as Row[];
      } catch (error) {
        this.failed(replica, error);
      }
    }
    return this.primaryReader.query<Row>(sql, parameters);
  }

  private failed(replica: Replica, error: unknown): void {
    if (isDatabaseUnavailable(error)) this.markDown(replica, error);
    else
      this.logger.warn({
        err: error,
        msg: `list read failed on replica ${replica.name}; trying elsewhere`,
      });
  }

  private checkAll(): void {
    for (const replica of this.replicas) void this.check(replica);
  }

  private async check(replica: Replica): Promise<void> {
    if (replica.checking) return;
    replica.checking = true;
    try {
      const { rows } = await replica.pool.query<{ lagMs: number; standby: boolean }>(
        queryConfig(LAG_SQL),
      );
      if (!rows[0].standby) {
        this.leave(replica);
        return;
      }
      replica.notStandby = false;
      const lagMs = Math.max(0, Number(rows[0].lagMs));
      const maxLag = this.config.database.replicaMaxLagMs;
      if (replica.up && replica.lagMs <= maxLag && lagMs > maxLag) {
        this.logger.warn(`replica ${replica.name} is ${Math.round(lagMs)} ms behind: skipped`);
      }
      if (!replica.up) this.logger.log(`replica ${replica.name} is reachable`);
      replica.up = true;
      replica.lagMs = lagMs;
    } catch (error) {
      this.markDown(replica, error);
    } finally {
      replica.checking = false;
    }
  }

  /**
   * Whether a replica can serve the lists now: one answered its last check and is within
   * DB_REPLICA_MAX_LAG_MS. False without DATABASE_READ_URLS.
   */
  serving(): boolean {
    const maxLag = this.config.database.replicaMaxLagMs;
    return this.replicas.some((replica) => replica.up && replica.lagMs <= maxLag);
  }

  /** Each replica's state at its last check, for the metrics. */
  states(): { name: string; up: boolean; lagMs: number }[] {
    return this.replicas.map(({ name, up, lagMs }) => ({ name, up, lagMs }));
  }

  /** Skips a replica whose URL reached a server that is no standby, and closes its connections. */
  private leave(replica: Replica): void {
    if (!replica.notStandby) {
      this.logger.warn(
        `replica ${replica.name} is not a standby (promoted?): skipped, its connections closed`,
      );
    }
    replica.notStandby = true;
    replica.up = false;
    const pool = replica.pool;
    replica.pool = this.openPool(replica.url);
    void pool.end().catch(() => {});
  }

  private markDown(replica: Replica, error: unknown): void {
    if (replica.up)
      this.logger.warn({ err: error, msg: `replica ${replica.name} is unreachable: skipped` });
    replica.up = false;
  }
}
