// A primary with a synchronous standby (Debian PostgreSQL 15: a throwaway primary and a
// pg_basebackup standby, scripts/lib/pg-cluster.mjs) for the specs about commits that wait for
// the standby. requireStandby('absent_standby') makes every commit wait for a standby that never
// confirms; requireStandby('*') lets the waiting commits complete.
import pg from 'pg';
import {
  postgresBinForReplicas,
  startPrimary,
  type ClusterServer,
  type Primary,
} from '../../scripts/lib/pg-cluster.mjs';
import { waitFor } from '../../scripts/lib/service-process.mjs';

/** PostgreSQL's warning when a commit's wait for the standby is cut short (it then commits locally). */
export const CANCELLED_WAIT = /canceling (the )?wait for synchronous replication/i;

export interface SyncPair {
  primary: Primary;
  standby: ClusterServer;
  admin: pg.Client;
  /** Sets synchronous_standby_names on the primary and reloads its configuration. */
  requireStandby(names: string): Promise<void>;
  /** Sessions of the service whose commit waits for the standby. */
  waitingCommits(): Promise<number>;
  /** Lines of the primary's log saying a commit's wait for the standby was cut short. */
  cancelledWaits(): string[];
  stop(): Promise<void>;
}

export async function startSyncPair(database: string): Promise<SyncPair> {
  if (!postgresBinForReplicas()) throw new Error("Debian PostgreSQL 15's pg_basebackup is needed");
  const primary = await startPrimary({ database });
  const standby = await primary.startStandby();
  const admin = new pg.Client({ connectionString: primary.url });
  await admin.connect();
  const requireStandby = async (names: string) => {
    await admin.query(`ALTER SYSTEM SET synchronous_standby_names = '${names}'`);
    await admin.query('SELECT pg_reload_conf()');
    await waitFor(
      `synchronous_standby_names = ${names}`,
      async () =>
        (await admin.query('SHOW synchronous_standby_names')).rows[0].synchronous_standby_names ===
        names,
      5000,
    );
  };
  await requireStandby('*');
  await waitFor(
    'the standby to be synchronous',
    async () =>
      (await admin.query(`SELECT 1 FROM pg_stat_replication WHERE sync_state = 'sync'`))
        .rowCount === 1,
    10_000,
  );
  return {
    primary,
    standby,
    admin,
    requireStandby,
    async waitingCommits() {
      const { rows } = await admin.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM pg_stat_activity
          WHERE wait_event = 'SyncRep' AND application_name = 'users-service'`,
      );
      return rows[0].n;
    },
    cancelledWaits: () =>
      primary
        .output()
        .split('\n')
        .filter((line) => CANCELLED_WAIT.test(line)),
    async stop() {
      await admin.end().catch(() => {});
      await standby.stop();
      await primary.stop();
    },
  };
}
