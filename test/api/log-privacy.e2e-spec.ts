// No personal data in logs: every error path the API has, driven with names and emails that must
// then appear in no log line, while the lines still say what failed (SQLSTATE, constraint, route,
// request id). The database is made to fail the way an unexpected bug would, with the request's
// values in the error's message, detail and hint.
import * as grpc from '@grpc/grpc-js';
import pg from 'pg';
import { getUser, usersClient, type UsersClient } from '../../scripts/lib/grpc-client.mjs';
import { waitFor } from '../../scripts/lib/service-process.mjs';
import { capturingLogger } from '../support/capturing-logger.js';
import { INTERNAL_ERROR } from '../support/expected-errors.js';
import { buildService, startService } from '../support/service-process.js';
import { createScratchTestApp, scratchDatabase, type TestApp } from '../support/test-app.js';

/** The people the requests carry: none of these may be written to a log. */
const PEOPLE = {
  raised: { name: 'Raise Privateperson', email: 'raise.private@example.org' },
  checked: { name: 'Check Privateperson', email: 'check.private@example.org' },
  cast: { name: 'Cast Privateperson', email: 'cast.private@example.org' },
  taken: { name: 'Taken Privateperson', email: 'taken.private@example.org' },
  second: { name: 'Second Privateperson', email: 'second.private@example.org' },
  stale: { name: 'Stale Privateperson', email: 'stale.private@example.org' },
  missing: { name: 'Missing Privateperson', email: 'missing.private@example.org' },
  invalid: { name: 'Invalid Privateperson', email: 'invalid.private-at-example.org' },
  purged: { name: 'Purged Privateperson', email: 'purged.private@example.org' },
};
const PERSONAL = Object.values(PEOPLE).flatMap(({ name, email }) => [name, email]);

// What an unexpected bug could look like: a trigger that fails with the row's values in its
// message, detail and hint (P0001), or casts one wrongly (22P02 quotes it), and a constraint
// whose violation's detail is the whole row (23514).
// One transaction: the service's database client sends several statements only with their COMMIT.
const FAULTS = `
  BEGIN;
  CREATE FUNCTION privacy_probe() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    IF NEW.name LIKE 'Raise %' THEN
      RAISE EXCEPTION 'refusing % <%>', NEW.name, NEW.email
        USING DETAIL = 'row ' || NEW.name, HINT = NEW.email, CONSTRAINT = 'users_privacy_probe';
    ELSIF NEW.name LIKE 'Cast %' THEN
      PERFORM NEW.email::int;
    END IF;
    RETURN NEW;
  END $$;
  CREATE TRIGGER privacy_probe BEFORE INSERT OR UPDATE ON users
    FOR EACH ROW EXECUTE FUNCTION privacy_probe();
  ALTER TABLE users ADD CONSTRAINT users_name_probe CHECK (name NOT LIKE 'Check %') NOT VALID;
  CREATE FUNCTION purge_probe() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    RAISE EXCEPTION 'keeping %', OLD.body USING DETAIL = OLD.body::text;
  END $$;
  CREATE TRIGGER purge_probe BEFORE DELETE ON idempotency_keys
    FOR EACH ROW EXECUTE FUNCTION purge_probe();
  COMMIT`;

function expectNoPersonalData(text: string): void {
  const found = PERSONAL.filter((value) => text.toLowerCase().includes(value.toLowerCase()));
  expect(found).toEqual([]);
}

describe('no personal data in logs (e2e)', () => {
  const captured = capturingLogger();
  let t: TestApp;
  let client: UsersClient;

  const line = (requestId: string, level = 'error') =>
    captured.lines().find((entry) => entry.requestId === requestId && entry.level === level);
  /** A write carrying `body`, under the request id `requestId`. */
  const send = (method: 'post' | 'put' | 'patch', path: string, body: object, requestId: string) =>
    t.http()[method](path).set('x-request-id', requestId).send(body);
  const create = (person: object, requestId: string) => send('post', '/users', person, requestId);

  beforeAll(async () => {
    t = await createScratchTestApp('users_log_privacy_test', {
      logger: captured.logger,
      env: { IDEMPOTENCY_PURGE_INTERVAL_MS: '200' },
    });
    await t.dataSource.query(FAULTS);
    client = usersClient(t.grpcAddress);
  });

  afterAll(async () => {
    client?.close();
    await t?.close();
  });

  it('POST /users failing in a trigger: 500, logged with its code, constraint, route and id', async () => {
    const res = await create(PEOPLE.raised, 'privacy-post').expect(500);
    expect(res.body).toEqual(INTERNAL_ERROR);
    expect(line('privacy-post')).toMatchObject({
      context: 'HTTP',
      route: '/users',
      msg: 'POST /users failed',
      err: { code: 'P0001', constraint: 'users_privacy_probe', message: '[redacted]' },
    });
    // A keyed create fails the same way, inside its transaction.
    await create(PEOPLE.raised, 'privacy-keyed').set('Idempotency-Key', 'privacy-1').expect(500);
    expect(line('privacy-keyed')).toMatchObject({ err: { code: 'P0001' } });
  });

  it('PATCH and PUT /users/:id failing on a constraint or a cast: 500, logged with what failed', async () => {
    const { body: user } = await create({ name: 'Someone' }, 'privacy-seed').expect(201);
    await send('patch', `/users/${user.id}`, PEOPLE.checked, 'privacy-patch').expect(
      500,
      INTERNAL_ERROR,
    );
    expect(line('privacy-patch')).toMatchObject({
      route: '/users/:id',
      msg: 'PATCH /users/:id failed',
      err: {
        type: 'DatabaseError',
        code: '23514',
        constraint: 'users_name_probe',
        table: 'users',
        message: 'new row for relation "users" violates check constraint "users_name_probe"',
      },
    });
    expect(line('privacy-patch')?.err).not.toHaveProperty('parameters');
    await send('put', `/users/${user.id}`, PEOPLE.cast, 'privacy-put').expect(500, INTERNAL_ERROR);
    expect(line('privacy-put')).toMatchObject({
      route: '/users/:id',
      err: { code: '22P02', message: '[redacted]' },
    });
  });

  it('the answers that are not errors of the service: 409, 412, 404, 400', async () => {
    const { body: user } = await create(PEOPLE.taken, 'privacy-taken').expect(201);
    // The answer names the email (the caller sent it); PostgreSQL's detail quotes it too.
    await create({ ...PEOPLE.second, email: PEOPLE.taken.email }, 'privacy-409').expect(409);
    await send('patch', `/users/${user.id}`, PEOPLE.stale, 'privacy-412')
      .set('If-Match', '"1.99"')
      .expect(412);
    await send('patch', '/users/999999', PEOPLE.missing, 'privacy-404').expect(404);
    await create(PEOPLE.invalid, 'privacy-400').expect(400);
    const expected = { 'privacy-409': 409, 'privacy-412': 412, 'privacy-404': 404 };
    for (const [requestId, statusCode] of Object.entries({ ...expected, 'privacy-400': 400 })) {
      expect(line(requestId, 'info')).toMatchObject({ context: 'HTTP', res: { statusCode } });
    }
  });

  it('gRPC NOT_FOUND and INTERNAL: logged with their code and the request id', async () => {
    const { body: user } = await create({ name: 'Someone Else' }, 'privacy-grpc-seed').expect(201);
    const metadata = (id: string) => {
      const value = new grpc.Metadata();
      value.set('x-request-id', id);
      return value;
    };
    const missing = await getUser(client, 999999, { metadata: metadata('privacy-grpc-404') });
    expect(missing.code).toBe(grpc.status.NOT_FOUND);
    expect(line('privacy-grpc-404', 'info')).toMatchObject({ grpc: { code: 'NOT_FOUND' } });
    // A schema the code does not expect: the column is gone for a moment.
    await t.dataSource.query('ALTER TABLE users RENAME COLUMN name TO name_hidden');
    try {
      const failed = await getUser(client, user.id, { metadata: metadata('privacy-grpc') });
      expect(failed).toEqual({ code: grpc.status.INTERNAL, details: 'internal error' });
    } finally {
      await t.dataSource.query('ALTER TABLE users RENAME COLUMN name_hidden TO name');
    }
    expect(line('privacy-grpc')).toMatchObject({
      context: 'gRPC',
      grpc: { method: 'users.Users/GetUser', code: 'INTERNAL' },
      err: { code: '42703', message: 'column "name" does not exist' },
    });
  });

  it('the background purge of expired keys, failing with a stored answer in its error', async () => {
    await create(PEOPLE.purged, 'privacy-purge').set('Idempotency-Key', 'purge-1').expect(201);
    await t.dataSource.query(
      `UPDATE idempotency_keys SET created_at = now() - interval '48 hours' WHERE key = 'purge-1'`,
    );
    const purgeFailed = () =>
      captured.lines().find((entry) => entry.context === 'Idempotency' && entry.level === 'warn');
    await waitFor('a failed purge', () => Promise.resolve(purgeFailed() !== undefined), 5000);
    expect(purgeFailed()).toMatchObject({
      msg: 'purge of expired keys failed',
      err: { code: 'P0001', message: '[redacted]' },
    });
  });

  it('wrote none of the names and emails above to any line', () => {
    expect(captured.lines().length).toBeGreaterThan(10);
    expectNoPersonalData(captured.raw());
  });
});

describe('no personal data in the logs of a boot that fails (e2e)', () => {
  beforeAll(() => buildService());

  it('a migration failing with values in its error: exit 1, the code logged, not the values', async () => {
    const scratch = await scratchDatabase('users_log_privacy_boot_test');
    try {
      const admin = new pg.Client({ connectionString: scratch.url });
      await admin.connect();
      await admin.query(`
        CREATE FUNCTION refuse_ddl() RETURNS event_trigger LANGUAGE plpgsql AS $$
        BEGIN
          RAISE EXCEPTION 'no DDL for ${PEOPLE.raised.name}'
            USING DETAIL = '${PEOPLE.raised.email}', HINT = '${PEOPLE.raised.email}';
        END $$;
        CREATE EVENT TRIGGER refuse_ddl ON ddl_command_start EXECUTE FUNCTION refuse_ddl();`);
      await admin.end();
      const service = await startService({ DATABASE_URL: scratch.url, MIGRATE_ON_BOOT: 'true' });
      expect((await service.exited).code).toBe(1);
      const output = service.output();
      expectNoPersonalData(output);
      const lines = output
        .split('\n')
        .filter(Boolean)
        .map((text) => JSON.parse(text) as { context?: string; err?: { code?: string } });
      expect(lines).toContainEqual(
        expect.objectContaining({
          context: 'Migrations',
          err: expect.objectContaining({ code: 'P0001' }),
        }),
      );
    } finally {
      await scratch.drop();
    }
  });
});
