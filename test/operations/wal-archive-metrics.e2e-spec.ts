// The WAL archive's metrics (db_wal_archive_*, what UsersServiceWalArchiveFailing reads) against a
// throwaway PostgreSQL that archives its WAL: an archive_command that fails shows as failing with
// failures counted, and one that works again as archiving with the failing flag cleared.
import { startThrowawayPostgres } from '../../scripts/lib/embedded-pg.mjs';
import { waitFor } from '../support/service-process.js';
import { createTestApp, type TestApp } from '../support/test-app.js';

type Cluster = Awaited<ReturnType<typeof startThrowawayPostgres>>;

describe('the WAL archive metrics (e2e)', () => {
  let cluster: Cluster;
  let t: TestApp;

  /** The db_wal_archive_* samples of one scrape, by name. */
  const archiveMetrics = async () => {
    const text = await (await fetch(t.metricsPortUrl('/metrics'))).text();
    return Object.fromEntries(
      [...text.matchAll(/^(db_wal_archive\w*|db_wal_archived_total) (\S+)$/gm)].map(
        ([, name, value]) => [name, Number(value)],
      ),
    );
  };

  /** Writes, then ends the WAL segment, which hands it to the archiver and wakes it. */
  const writeAndSwitchWal = async (name: string) => {
    await t.http().post('/users').send({ name }).expect(201);
    await t.dataSource.query(`SELECT pg_switch_wal()`);
  };

  /** Waits until `done` holds of the metrics, handing the archiver a new segment each time. */
  const untilMetrics = (what: string, done: (metrics: Record<string, number>) => boolean) =>
    waitFor(what, async () => {
      if (done(await archiveMetrics())) return true;
      await writeAndSwitchWal(what);
      return false;
    });

  const setArchiveCommand = async (command: string) => {
    await t.dataSource.query(`ALTER SYSTEM SET archive_command = '${command}'`);
    await t.dataSource.query(`SELECT pg_reload_conf()`);
  };

  beforeAll(async () => {
    cluster = await startThrowawayPostgres({
      prefix: 'users-wal-archive-',
      database: 'users_wal_archive_test',
      postgresFlags: ['-c', 'archive_mode=on'],
    });
    t = await createTestApp({ env: { DATABASE_URL: cluster.url! } });
    // Set here rather than on the command line, where it would override ALTER SYSTEM.
    await setArchiveCommand('exit 1');
  }, 60_000);

  afterAll(async () => {
    await t?.close();
    await cluster?.stop();
  });

  it('shows a failing archive_command: failing, failures counted, nothing archived', async () => {
    await untilMetrics('the archiver to fail', (m) => m.db_wal_archive_failures_total > 0);
    expect(await archiveMetrics()).toMatchObject({
      db_wal_archive_enabled: 1,
      db_wal_archive_failing: 1,
      db_wal_archived_total: 0,
      db_wal_archive_last_success_age_seconds: -1,
    });
  });

  it('shows the archive working again: segments archived, failing cleared', async () => {
    await setArchiveCommand('exit 0');
    // A new segment ready wakes the archiver, which then archives every waiting one in order.
    await untilMetrics('the archiver to succeed', (m) => m.db_wal_archived_total > 0);
    const metrics = await archiveMetrics();
    expect(metrics).toMatchObject({ db_wal_archive_enabled: 1, db_wal_archive_failing: 0 });
    expect(metrics.db_wal_archive_failures_total).toBeGreaterThan(0);
    expect(metrics.db_wal_archive_last_success_age_seconds).toBeGreaterThanOrEqual(0);
    expect(metrics.db_wal_archive_last_success_age_seconds).toBeLessThan(60);
  });
});
