// Least privilege in the database (docs/deploying.md, "Database roles"): on a throwaway cluster
// set up with deploy/sql/roles.sql, the migrations run as the migration role (the Job's command),
// the service runs its whole API as the runtime role, and that role can change no schema.
import * as grpc from '@grpc/grpc-js';
import pg from 'pg';
import { startThrowawayPostgres } from '../../scripts/lib/embedded-pg.mjs';
import { getUser, usersClient, type UsersClient } from '../../scripts/lib/grpc-client.mjs';
import { waitFor } from '../../scripts/lib/service-process.mjs';
import { dataSourceOptions } from '../../src/database/database-options.js';
import { IdempotencyKeyPurge } from '../../src/idempotency/idempotency-key-purge.js';
import { ChangesPurge } from '../../src/changes/changes-purge.js';
import { migrationJob } from '../support/migration-job.js';
import { read } from '../support/project-files.js';
import { buildService } from '../support/service-process.js';
import { createTestApp, type TestApp } from '../support/test-app.js';

const DATABASE = 'users_roles_test';
const MIGRATE = { role: 'users_service_migrate', password: 'migrate-secret-1' };
const APP = { role: 'users_service_app', password: 'app-secret-1' };
const RUNTIME = 'users_service_runtime';

/** Every privilege the runtime role holds, table by table (column privileges as `UPDATE (c)`). */
const EXPECTED_PRIVILEGES = {
  group_members: ['DELETE', 'INSERT', 'SELECT'],
  groups: ['DELETE', 'INSERT', 'SELECT', 'UPDATE'],
  idempotency_keys: ['DELETE', 'INSERT', 'SELECT', 'UPDATE (created_at)'],
  list_counts: ['SELECT'],
  migrations: ['SELECT'],
  posts: ['INSERT', 'SELECT'],
  user_changes: ['SELECT'],
  user_changes_watermark: ['SELECT'],
  users: ['DELETE', 'INSERT', 'SELECT', 'UPDATE'],
};

describe('database roles: a migration role and a runtime role (e2e)', () => {
  let cluster: Awaited<ReturnType<typeof startThrowawayPostgres>>;
  let admin: pg.Client;
  let t: TestApp;
  let client: UsersClient;
  const urlOf = ({ role, password }: typeof APP) =>
    `postgres://${role}:${password}@127.0.0.1:${cluster.port}/${DATABASE}`;

  /** Runs `sql` logged in as the service's role; resolves with the SQLSTATE it failed with. */
  async function asRuntime(sql: string): Promise<string | undefined> {
    const runtime = new pg.Client({ connectionString: urlOf(APP) });
    await runtime.connect();
    try {
      await runtime.query(sql);
      return undefined;
    } catch (error) {
      return (error as { code?: string }).code;
    } finally {
      await runtime.end();
    }
  }

  beforeAll(async () => {
    buildService();
    cluster = await startThrowawayPostgres({ prefix: 'users-service-roles-', database: DATABASE });
    admin = new pg.Client({ connectionString: cluster.url });
    await admin.connect();
    // What the DBA runs once, as documented, then the passwords they would set with \password.
    await admin.query(read('deploy/sql/roles.sql'));
    for (const { role, password } of [MIGRATE, APP]) {
      await admin.query(`ALTER ROLE ${role} PASSWORD '${password}'`);
    }
    const job = await migrationJob(urlOf(MIGRATE));
    expect(job).toEqual({ code: 0, output: expect.any(String) });
    t = await createTestApp({
      grpc: true,
      env: { DATABASE_URL: urlOf(APP), MIGRATE_ON_BOOT: 'false' },
    });
    client = usersClient(t.grpcAddress);
  });

  afterAll(async () => {
    client?.close();
    await t?.close();
    await admin?.end();
    await cluster?.stop();
  });

  it('the migrations ran as the migration role, which owns every table and function', async () => {
    const migrations = dataSourceOptions({ url: cluster.url } as never).migrations as unknown[];
    const applied = await admin.query('SELECT name FROM migrations');
    expect(applied.rowCount).toBe(migrations.length);
    const owners = await admin.query(`
      SELECT c.relname AS name, pg_get_userbyid(c.relowner) AS owner FROM pg_class c
      WHERE c.relnamespace = 'public'::regnamespace AND c.relkind IN ('r', 'S')
      UNION ALL
      SELECT p.proname, pg_get_userbyid(p.proowner) FROM pg_proc p
      WHERE p.pronamespace = 'public'::regnamespace`);
    expect(owners.rows.length).toBeGreaterThan(10);
    expect(owners.rows.filter((row) => row.owner !== MIGRATE.role)).toEqual([]);
    const schema = await admin.query(`SELECT pg_get_userbyid(nspowner) AS owner
      FROM pg_namespace WHERE nspname = 'public'`);
    expect(schema.rows).toEqual([{ owner: MIGRATE.role }]);
  });

  it('the runtime role holds exactly the privileges the service needs, table by table', async () => {
    const tables = await admin.query(
      `
      SELECT table_name AS "table", privilege_type AS privilege
      FROM information_schema.role_table_grants WHERE grantee = $1
      UNION ALL
      SELECT table_name, privilege_type || ' (' || column_name || ')'
      FROM information_schema.column_privileges c WHERE grantee = $1
        AND NOT EXISTS (SELECT FROM information_schema.role_table_grants t WHERE t.grantee = $1
          AND t.table_name = c.table_name AND t.privilege_type = c.privilege_type)`,
      [RUNTIME],
    );
    const held: Record<string, string[]> = {};
    for (const { table, privilege } of tables.rows) (held[table] ??= []).push(privilege);
    for (const privileges of Object.values(held)) privileges.sort();
    expect(held).toEqual(EXPECTED_PRIVILEGES);
    // No sequence to draw from (the ids are identity columns), one to read (where the feed's ids
    // stand, for its metric), nothing held by the login role itself, and it owns nothing.
    const extra = await admin.query(
      `SELECT
        (SELECT count(*)::int FROM pg_class
          WHERE relkind = 'S' AND relnamespace = 'public'::regnamespace) AS sequences,
        (SELECT count(*)::int FROM pg_class WHERE CASE WHEN relkind = 'S'
          THEN has_sequence_privilege($1, oid, 'USAGE, UPDATE') END) AS usable,
        (SELECT array_agg(relname::text) FROM pg_class WHERE CASE WHEN relkind = 'S'
          THEN has_sequence_privilege($1, oid, 'SELECT') END) AS readable,
        (SELECT count(*)::int FROM information_schema.role_table_grants WHERE grantee = $2)
          AS direct,
        (SELECT count(*)::int FROM pg_class WHERE relowner = $2::regrole) AS owned,
        pg_has_role($2, $1, 'USAGE') AS member`,
      [RUNTIME, APP.role],
    );
    expect(extra.rows).toEqual([
      {
        sequences: expect.any(Number),
        usable: 0,
        readable: ['user_changes_id_seq'],
        direct: 0,
        owned: 0,
        member: true,
      },
    ]);
    expect(extra.rows[0].sequences).toBeGreaterThanOrEqual(2);
  });

  it('the service runs its whole API as the runtime role', async () => {
    const http = t.http;
    await waitFor('readiness', async () => (await http().get('/health/ready')).status === 200);
    const ada = await http().post('/users').send({ name: 'Ada', email: 'ada@example.com' });
    expect(ada.status).toBe(201);
    const { id } = ada.body as { id: number };
    await http().get(`/users/${id}`).expect(200);
    await http().get(`/users/${id}`).set('If-None-Match', ada.headers.etag).expect(304);
    await http().post('/users').send({ name: 'Linus', role: 'admin' }).expect(201);
    const list = await http().get('/users?limit=1').expect(200);
    expect(list.headers['x-total-count']).toBe('2');
    expect((await http().get('/users?role=admin').expect(200)).headers['x-total-count']).toBe('1');
    await http().get('/users?cursor=').expect(200);

    const patched = await http()
      .patch(`/users/${id}`)
      .set('If-Match', ada.headers.etag)
      .send({ role: 'admin' })
      .expect(200);
    expect(patched.headers.etag).not.toBe(ada.headers.etag);
    await http().patch(`/users/${id}`).set('If-Match', ada.headers.etag).send({}).expect(412);
    await http().put(`/users/${id}`).send({ name: 'Ada Lovelace' }).expect(200);
    expect((await http().get('/users?role=admin').expect(200)).headers['x-total-count']).toBe('1');

    for (const title of ['Notes', 'More notes']) {
      await http().post(`/users/${id}/posts`).send({ title }).expect(201);
    }
    const posts = await http().get(`/users/${id}/posts`).expect(200);
    expect(posts.headers['x-total-count']).toBe('2');
    await http().get(`/users/${id}/posts/${posts.body[0].id}`).expect(200);

    const keyed = () =>
      http().post('/users').set('Idempotency-Key', 'roles-1').send({ name: 'Grace' }).expect(201);
    const first = await keyed();
    const replay = await keyed();
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.body).toEqual(first.body);

    // A SCIM group of the user, renamed and with its members replaced.
    const scim = (method: 'post' | 'patch', path: string, body: object) =>
      http()
        [method](`/scim/v2${path}`)
        .set('Content-Type', 'application/scim+json')
        .send(JSON.stringify(body));
    const group = await scim('post', '/Groups', {
      schemas: ['urn:ietf:params:scim:schemas:core:2.0:Group'],
      displayName: 'Admins',
      members: [{ value: String(id) }],
    }).expect(201);
    const renamed = await scim('patch', `/Groups/${group.body.id}?attributes=members`, {
      schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'],
      Operations: [
        { op: 'replace', path: 'displayName', value: 'Owners' },
        { op: 'replace', path: 'members', value: [{ value: String(id) }] },
      ],
    }).expect(200);
    expect(renamed.body.members).toEqual([expect.objectContaining({ value: String(id) })]);
    // A provider's look-up, each user with its groups (read by the database's functions).
    const found = await http()
      .get(`/scim/v2/Users?filter=${encodeURIComponent('displayName eq "Ada Lovelace"')}`)
      .expect(200);
    expect(found.body.Resources.map((user: { groups: unknown }) => user.groups)).toEqual([
      [expect.objectContaining({ value: String(group.body.id), display: 'Owners' })],
    ]);
    // The look-ups providers send before each create (the database's look-up functions), and
    // the user by id with its groups.
    const lookUp = async (filter: string) =>
      (
        await http()
          .get(`/scim/v2/Users?filter=${encodeURIComponent(filter)}`)
          .expect(200)
      ).body;
    const byUserName = await lookUp('userName eq "ADA@example.com"');
    expect(
      byUserName.Resources.map((user: { id: string; groups: { display: string }[] }) => [
        user.id,
        user.groups.map((g) => g.display),
      ]),
    ).toEqual([[String(id), ['Owners']]]);
    expect((await lookUp('externalId eq "nobody"')).totalResults).toBe(0);
    const byId = await http().get(`/scim/v2/Users/${id}`).expect(200);
    expect(byId.body.groups).toEqual([expect.objectContaining({ display: 'Owners' })]);
    // The release before reads groups by two older functions; they stay for it, since it serves
    // while the migration Job runs.
    expect(
      await asRuntime(`SELECT user_group_ids(${id}), user_group_names(${id})`),
    ).toBeUndefined();

    const { code, reply } = await getUser(client, id);
    expect([code, reply?.name]).toEqual([grpc.status.OK, 'Ada Lovelace']);

    // DELETE takes the user's posts with it (the cascade and the counting triggers run as the
    // owner); the totals follow.
    await http().delete(`/users/${id}`).expect(204);
    await http().get(`/users/${id}/posts`).expect(404);
    expect((await http().get('/users').expect(200)).headers['x-total-count']).toBe('2');
    expect((await admin.query('SELECT count(*)::int AS n FROM posts')).rows).toEqual([{ n: 0 }]);
    expect((await admin.query('SELECT count(*)::int AS n FROM group_members')).rows).toEqual([
      { n: 0 },
    ]);

    // The background purge of expired keys.
    await admin.query(`UPDATE idempotency_keys SET created_at = now() - interval '48 hours'`);
    expect(await t.app.get(IdempotencyKeyPurge).purgeExpired()).toBe(1);

    // The change feed: every change above was recorded (by the trigger, as the migration role)
    // and reads back as the runtime role.
    const feed = await http().get('/users/changes?limit=1000').expect(200);
    expect((feed.body as { events: { type: string }[] }).events.map((e) => e.type)).toEqual(
      expect.arrayContaining([
        'users.user.created.v1',
        'users.user.updated.v1',
        'users.user.deleted.v1',
      ]),
    );
    // Its metrics, read by the runtime role too.
    const metrics = await (await fetch(t.metricsUrl)).text();
    expect(metrics).toMatch(/^user_changes_events_total [1-9]\d*$/m);
    expect(metrics).toMatch(/^user_changes_blocking_transaction_age_seconds \d/m);
    // And its purge, past the retention.
    await admin.query(`UPDATE user_changes SET at = now() - interval '400 hours'`);
    expect(await t.app.get(ChangesPurge).purgeExpired()).toBe(feed.body.events.length);
  });

  it('the feed metric sees a transaction another role holds open (the migration Job, an operator)', async () => {
    const blockingAge = async () =>
      Number(
        /^user_changes_blocking_transaction_age_seconds (\S+)$/m.exec(
          await (await fetch(t.metricsUrl)).text(),
        )?.[1],
      );
    const other = new pg.Client({ connectionString: urlOf(MIGRATE) });
    await other.connect();
    try {
      await other.query('BEGIN');
      await other.query('SELECT pg_current_xact_id()');
      await waitFor(
        'the other role’s transaction in the metric',
        async () => (await blockingAge()) > 0.2,
        10_000,
      );
      await other.query('COMMIT');
      expect(await blockingAge()).toBe(0);
    } finally {
      await other.end();
    }
  });

  it('the runtime role can neither change the schema nor forge a total or the feed: 42501 each time', async () => {
    const refused: Record<string, string | undefined> = {};
    for (const table of Object.keys(EXPECTED_PRIVILEGES)) {
      refused[`DROP ${table}`] = await asRuntime(`DROP TABLE "${table}"`);
      refused[`ALTER ${table}`] = await asRuntime(`ALTER TABLE "${table}" ADD COLUMN "x" int`);
      refused[`TRUNCATE ${table}`] = await asRuntime(`TRUNCATE "${table}"`);
    }
    refused['CREATE TABLE'] = await asRuntime('CREATE TABLE "intruder" ("id" int)');
    refused['CREATE TEMP TABLE'] = await asRuntime('CREATE TEMP TABLE "intruder" ("id" int)');
    refused['CREATE FUNCTION'] = await asRuntime(
      'CREATE FUNCTION "intruder"() RETURNS int LANGUAGE sql AS $$ SELECT 1 $$',
    );
    refused['write list_counts'] = await asRuntime(
      `UPDATE "list_counts" SET "n" = "n" + 1000 WHERE "list" = 'users'`,
    );
    refused['rebuild list_counts'] = await asRuntime('SELECT list_counts_rebuild()');
    refused['write migrations'] = await asRuntime(`DELETE FROM "migrations"`);
    refused['forge a change event'] = await asRuntime(
      `INSERT INTO "user_changes" ("position", "user_id", "version", "type", "changed", "at", "xid")
       VALUES (1, 1, 99, 'deleted', '{}', now(), 1)`,
    );
    // The purge runs as the owner, in user_changes_purge: the feed's history is not the
    // runtime role's to rewrite.
    refused['delete a change event'] = await asRuntime(`DELETE FROM "user_changes"`);
    refused['move the change watermark'] = await asRuntime(
      `UPDATE "user_changes_watermark" SET "position" = 0, "id" = 0`,
    );
    refused['delete posts'] = await asRuntime(`DELETE FROM "posts"`);
    expect(refused).toEqual(
      Object.fromEntries(Object.keys(refused).map((statement) => [statement, '42501'])),
    );
  });

  it('gives the runtime role a client connection check and no statement timeout', async () => {
    const runtime = new pg.Client({ connectionString: urlOf(APP) });
    await runtime.connect();
    try {
      const { rows } = await runtime.query(
        `SELECT current_setting('client_connection_check_interval') AS check_interval,
                current_setting('statement_timeout') AS statement_timeout`,
      );
      expect(rows).toEqual([{ check_interval: '1s', statement_timeout: '0' }]);
    } finally {
      await runtime.end();
    }
  });
});
