import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import type { Repository } from 'typeorm';
import { EntitySql } from '../database/entity-sql.js';
import { PrimaryPool } from '../database/queryable.js';
import { SNAPSHOT_HORIZON } from '../database/snapshot-horizon.js';
import { reads, type ReadStatement } from '../database/statement.js';
import type { FeedKey } from './change-token.js';
import { UserChange } from './user-change.entity.js';
import { UserChangesWatermark } from './user-changes-watermark.entity.js';

/** The horizon of the statement's snapshot: every transaction below it has ended. */
const HORIZON = `${SNAPSHOT_HORIZON}::bigint`;
const PURGE_BATCH = 1000;
/** Batches per purge run, so one run stays short whatever the backlog; the next run goes on. */
const PURGE_MAX_BATCHES = 50;

/** One read of the feed, with what the caller needs to judge the token it read after. */
export interface FeedRead {
  events: UserChange[];
  /** Where the read started: the token's key, or without one the oldest event retained. */
  start: FeedKey;
  /** The last event the retention purge deleted, if any. */
  purged?: FeedKey;
  /** The first transaction id not yet started when the read's snapshot was taken. */
  newest: bigint;
}

/** The feed's figures for the metrics (one statement). */
export interface FeedStats {
  /** Events written so far (the identity's last value; rolled-back writes included). */
  written: number;
  /** Seconds since the newest event a reader can see was written; undefined with none. */
  visibleAgeS?: number;
  /** Seconds the oldest running transaction holding an id has run; 0 with none. */
  blockingAgeS: number;
}

const key = (row: { position: string; id: string }): FeedKey => ({
  position: BigInt(row.position),
  id: BigInt(row.id),
});

/** The key read by ChangesRepository.snapshotKeySql (`<position>.<id>`). */
export function parseSnapshotKey(value: string): FeedKey {
  const [position, id] = value.split('.');
  return key({ position, id });
}

/**
 * Every statement on `user_changes` and its watermark, on the primary. Reads return only events
 * below the horizon of their own snapshot (docs/events.md): a transaction still running, or not
 * started, can only add events after them, so reading in (position, id) order never passes over
 * a change that commits later. Rows are written by the database's triggers, never here.
 */
@Injectable()
export class ChangesRepository {
  private readonly sql: EntitySql<UserChange>;
  /** The entity's properties, as the page's rows name its columns. */
  private readonly properties: string[];
  private readonly pageSql: ReadStatement;
  private readonly newestSql: ReadStatement;
  /** A SELECT that writes: unmarked, so the client treats it as the commit it is. */
  private readonly purgeSql: string;
  /**
   * SQL of where the feed stands in the statement's snapshot, as `<position>.<id>`: the newest
   * event below the horizon, or the watermark, or the start. A list reads it in its page's
   * statement for its `Changes-Token`.
   */
  readonly snapshotKeySql: string;
  private readonly statsSql: ReadStatement;

  constructor(
    @InjectRepository(UserChange) changes: Repository<UserChange>,
    @InjectRepository(UserChangesWatermark) watermarks: Repository<UserChangesWatermark>,
    private readonly primary: PrimaryPool,
  ) {
    const sql = (this.sql = new EntitySql(changes));
    this.properties = changes.metadata.columns.map((column) => column.propertyName);
    const mark = new EntitySql(watermarks);
    const [position, id, at] = (['position', 'id', 'at'] as const).map((p) => sql.column(p));
    const order = `${position}, ${id}`;
    // One snapshot for the page, the watermark and the horizon: the purge deletes events and
    // moves the watermark in one transaction, so a token is judged against the events read.
    // Without a token ($1, $2 null), the read starts at the watermark.
    this.pageSql = reads(`
      SELECT w.${mark.column('position')} AS "purgedPosition", w.${mark.column('id')} AS "purgedId",
        pg_snapshot_xmax(s.snapshot)::text AS "newest", e.*
      FROM (SELECT pg_current_snapshot() AS snapshot) s
      LEFT JOIN ${mark.table} w ON true
      LEFT JOIN LATERAL (
        SELECT ${sql.selectList} FROM ${sql.table}
        WHERE (${order}) > (coalesce($1::bigint, w.${mark.column('position')}, 0),
                            coalesce($2::bigint, w.${mark.column('id')}, 0))
          AND ${position} < pg_snapshot_xmin(s.snapshot)::text::bigint
        ORDER BY ${order} LIMIT $3
      ) e ON true`);
    // Backwards from the horizon: the newest visible event, whatever waits above it.
    this.newestSql = reads(
      `SELECT ${position}, ${id} FROM ${sql.table} WHERE ${position} < ${HORIZON} ` +
        `ORDER BY ${position} DESC, ${id} DESC LIMIT 1`,
    );
    // A token names only a place the database has shown as committed. The bare horizon would
    // name transaction ids that a promoted standby or a restored database may hand out again
    // (the old primary's transactions that were never replicated), and an event written at such
    // an id, below the token, would be passed over for good.
    this.snapshotKeySql = `SELECT coalesce(
      (SELECT ${position} || '.' || ${id} FROM ${sql.table} WHERE ${position} < ${HORIZON}
        ORDER BY ${position} DESC, ${id} DESC LIMIT 1),
      (SELECT ${mark.column('position')} || '.' || ${mark.column('id')} FROM ${mark.table}),
      '0.0')`;
    // One batch in a function that runs as the table's owner, one purger at a time (migration
    // UserChangesPurgeFunction): the runtime role may not delete events nor move the watermark.
    this.purgeSql = `SELECT "user_changes_purge"($1, $2) AS "deleted"`;
    // pg_stat_activity shows other roles' transactions only to a role granted pg_read_all_stats
    // (docs/events.md); prepared transactions hold the horizon too, and for as long as they stay.
    this.statsSql = reads(`
      SELECT
        coalesce(pg_sequence_last_value(pg_get_serial_sequence('${sql.table}', 'id')::regclass), 0)::float8 AS "written",
        (SELECT extract(epoch FROM clock_timestamp() - ${at}) FROM ${sql.table}
          WHERE ${position} < ${HORIZON} ORDER BY ${position} DESC, ${id} DESC LIMIT 1)::float8 AS "visibleAgeS",
        coalesce((SELECT extract(epoch FROM clock_timestamp() - min(started)) FROM (
          SELECT xact_start AS started FROM pg_stat_activity WHERE backend_xid IS NOT NULL
          UNION ALL SELECT prepared FROM pg_prepared_xacts) t), 0)::float8 AS "blockingAgeS"`);
  }

  /** Up to `limit` events after `after` (without: from the oldest retained), in feed order. */
  async page(after: FeedKey | undefined, limit: number): Promise<FeedRead> {
    const rows = await this.primary.query<Record<string, unknown>>(this.pageSql, [
      after?.position.toString() ?? null,
      after?.id.toString() ?? null,
      limit,
    ]);
    const [first] = rows;
    const purged =
      first.purgedPosition === null
        ? undefined
        : key({ position: first.purgedPosition as string, id: first.purgedId as string });
    // A read that found no event still has its one row: the snapshot's, with null event columns.
    const events = rows
      .filter((row) => row.id !== null)
      .map((row) =>
        this.sql.toEntity(Object.fromEntries(this.properties.map((name) => [name, row[name]]))),
      );
    return {
      events,
      start: after ?? purged ?? { position: 0n, id: 0n },
      purged,
      newest: BigInt(first.newest as string),
    };
  }

  /** The last event a reader can see now, if any. */
  async newestVisible(): Promise<FeedKey | undefined> {
    const [row] = await this.primary.query<{ position: string; id: string }>(this.newestSql);
    return row && key(row);
  }

  /** Deletes events older than `retentionHours`, in batches. @returns how many */
  async purgeExpired(retentionHours: number): Promise<number> {
    let deleted = 0;
    for (let batch = 0; batch < PURGE_MAX_BATCHES; batch++) {
      const [row] = await this.primary.query<{ deleted: number }>(this.purgeSql, [
        retentionHours,
        PURGE_BATCH,
      ]);
      deleted += row.deleted;
      if (row.deleted < PURGE_BATCH) break;
    }
    return deleted;
  }

  async stats(): Promise<FeedStats> {
    const [row] = await this.primary.query<{
      written: number;
      visibleAgeS: number | null;
      blockingAgeS: number;
    }>(this.statsSql);
    return {
      written: row.written,
      visibleAgeS: row.visibleAgeS ?? undefined,
      blockingAgeS: Math.max(0, row.blockingAgeS),
    };
  }
}
