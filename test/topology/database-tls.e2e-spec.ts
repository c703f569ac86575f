// TLS to PostgreSQL with the server's certificate verified (sslmode=verify-full): DB_CA_FILE
// names the CA (docs/deploying.md, "Database TLS"). A throwaway server with TLS on, its
// certificates made by the test. Skipped, saying so, where Debian's PostgreSQL is not installed.
import {
  postgresBinForReplicas,
  startPrimary,
  type Primary,
} from '../../scripts/lib/pg-cluster.mjs';
import { createTestApp } from '../support/test-app.js';
import { makeTlsCertificates, type TlsCertificates } from '../support/tls-certificates.js';
import { describeWhenInstalled } from '../support/when-installed.js';

describeWhenInstalled(
  'database TLS: DB_CA_FILE, verify-full (e2e)',
  postgresBinForReplicas() ? [] : ['postgresql'],
  'apt-get install postgresql',
  () => {
    let certificates: TlsCertificates;
    let primary: Primary;

    beforeAll(async () => {
      certificates = await makeTlsCertificates();
      primary = await startPrimary({
        database: 'users_test',
        settings: {
          ssl: 'on',
          ssl_cert_file: certificates.certFile,
          ssl_key_file: certificates.keyFile,
        },
      });
    });
    afterAll(async () => {
      await primary?.stop();
      await certificates?.remove();
    });

    it('serves over connections that are all TLS, verified against DB_CA_FILE', async () => {
      const t = await createTestApp({
        env: { DATABASE_URL: primary.url, DB_CA_FILE: certificates.caFile, DB_REQUIRE_TLS: 'true' },
      });
      try {
        await t.http().get('/health/ready').expect(200);
        await t.http().post('/users').send({ name: 'Ada' }).expect(201);
        const connections: { ssl: boolean }[] = await t.dataSource.query(
          `SELECT s.ssl FROM pg_stat_ssl s JOIN pg_stat_activity a USING (pid)
           WHERE a.application_name = 'users-service'`,
        );
        expect(connections.length).toBeGreaterThan(0);
        expect(connections.every((connection) => connection.ssl)).toBe(true);
      } finally {
        await t.close();
      }
    });

    it('refuses to boot when DB_CA_FILE did not sign the server’s certificate', async () => {
      await expect(
        createTestApp({
          env: { DATABASE_URL: primary.url, DB_CA_FILE: certificates.otherCaFile },
        }),
      ).rejects.toThrow(
        /^the database server's TLS certificate failed verification \(.+\): DB_CA_FILE must hold the CA that signed it/,
      );
    });
  },
);
