// A primary outage with a read replica (Debian PostgreSQL: a throwaway primary, reached through a
// TCP proxy that can cut it off, and a pg_basebackup standby as DATABASE_READ_URLS): the instance
// stays ready while the replica serves the lists, and answers writes and reads by id with 503;
// without a usable replica, or without replicas at all, it is not ready. Skipped, saying so,
// without Debian's pg_basebackup; .ci/run has it.
import pg from 'pg';
import {
  postgresBinForReplicas,
  startPrimary,
  type ClusterServer,
  type Primary,
} from '../../scripts/lib/pg-cluster.mjs';
import { SERVICE_UNAVAILABLE } from '../support/expected-errors.js';
import { waitFor } from '../support/service-process.js';
import { TcpProxy } from '../support/tcp-proxy.js';
import { createTestApp, type TestApp } from '../support/test-app.js';
import { describeWhenInstalled } from '../support/when-installed.js';

describeWhenInstalled(
  'a primary outage with a read replica (e2e)',
  postgresBinForReplicas() ? [] : ['pg_basebackup'],
  'apt-get install postgresql',
  () => {
    let primary: Primary;
    let standby: ClusterServer;
    let proxy: TcpProxy;
    let t: TestApp;
    let withoutReplicas: TestApp;
    let adaId: number;

    /** The app's DATABASE_URL: the primary, through the proxy. */
    const primaryUrl = () => {
      const url = new URL(primary.url);
      url.port = String(proxy.port);
      return url.toString();
    };
    const ready = async (app: TestApp) => {
      const res = await app.http().get('/health/ready');
      return { status: res.status, body: res.body as Record<string, unknown> };
    };

    beforeAll(async () => {
      primary = await startPrimary({ database: 'users_outage_test' });
      standby = await primary.startStandby();
      proxy = new TcpProxy('127.0.0.1', primary.port);
      await proxy.start();
      const env = { DATABASE_URL: primaryUrl(), DB_CONNECT_TIMEOUT_MS: '1000' };
      t = await createTestApp({
        env: { ...env, DATABASE_READ_URLS: standby.url, DB_REPLICA_MAX_LAG_MS: '60000' },
      });
      withoutReplicas = await createTestApp({ env: { ...env, MIGRATE_ON_BOOT: 'false' } });
      adaId = (await t.http().post('/users').send({ name: 'Ada' }).expect(201)).body.id;
      const replica = new pg.Client({ connectionString: standby.url });
      await replica.connect();
      try {
        await waitFor(
          'Ada on the replica',
          async () =>
            (await replica.query(`SELECT 1 FROM users WHERE name = 'Ada'`)).rowCount === 1,
        );
      } finally {
        await replica.end();
      }
      await waitFor('the replica to be checked', async () => (await ready(t)).status === 200);
    }, 120_000);

    afterAll(async () => {
      await t?.close();
      await withoutReplicas?.close();
      await proxy?.cut();
      await standby?.stop();
      await primary?.stop();
    });

    it('is ready on the primary as usual, without saying anything of replicas', async () => {
      expect(await ready(t)).toEqual({
        status: 200,
        body: { ok: true, database: 'up', shuttingDown: false },
      });
    });

    it('stays ready through a primary outage while the replica serves the lists; writes and reads by id answer 503', async () => {
      await proxy.cut();
      await waitFor(
        'the primary to be seen down',
        async () => (await ready(t)).body.database === 'down',
      );
      expect(await ready(t)).toEqual({
        status: 200,
        body: { ok: true, database: 'down', shuttingDown: false, replicas: 'serving' },
      });
      // Without replicas the same outage takes the instance out of service.
      await waitFor(
        'the other instance to see it',
        async () => (await ready(withoutReplicas)).status === 503,
      );

      const list = await t.http().get('/users').expect(200);
      expect(list.body.map((user: { name: string }) => user.name)).toEqual(['Ada']);
      expect(list.headers['x-total-count']).toBe('1');

      for (const request of [
        () => t.http().get(`/users/${adaId}`),
        () => t.http().post('/users').send({ name: 'Bob' }),
        () => t.http().patch(`/users/${adaId}`).send({ name: 'Ada L.' }),
      ]) {
        const res = await request();
        expect({ status: res.status, body: res.body }).toEqual({
          status: 503,
          body: SERVICE_UNAVAILABLE,
        });
      }
    });

    it('is not ready once the replica is gone too', async () => {
      await standby.halt();
      await waitFor('the replica to be seen down', async () => (await ready(t)).status === 503);
      expect((await ready(t)).body).toEqual({ ok: false, database: 'down', shuttingDown: false });
    });

    it('is ready on the primary again once it is back', async () => {
      await proxy.restore();
      await waitFor('the primary to be back', async () => (await ready(t)).body.database === 'up');
      expect(await ready(t)).toEqual({
        status: 200,
        body: { ok: true, database: 'up', shuttingDown: false },
      });
      await t.http().post('/users').send({ name: 'Bob' }).expect(201);
    });
  },
);
