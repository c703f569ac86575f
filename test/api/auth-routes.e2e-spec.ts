// Which routes need what with authentication on, that a refusal changes nothing and tells
// nothing, and what a caller leaves in the logs and metrics.
import request from 'supertest';
import { DataSource } from 'typeorm';
import { send } from '../../scripts/lib/http-client.mjs';
import { TokenVerifierService } from '../../src/auth/token-verifier.service.js';
import { capturingLogger } from '../support/capturing-logger.js';
import { createTestApp, resetDatabase, TEST_API_KEYS, type TestApp } from '../support/test-app.js';
import {
  authEnv,
  type AuthApp,
  eventually,
  JwksServer,
  mint,
  signingKey,
  startAuthApp,
  type SigningKey,
} from '../support/identity-provider.js';

/** Every row of every entity table: what a refused request must leave as it was. */
async function snapshot(dataSource: DataSource): Promise<Record<string, unknown[]>> {
  const tables: Record<string, unknown[]> = {};
  for (const { tableName } of dataSource.entityMetadatas) {
    tables[tableName] = await dataSource.query(`SELECT * FROM "${tableName}" ORDER BY 1`);
  }
  return tables;
}

describe('routes with authentication on (e2e)', () => {
  let app: AuthApp;
  let key: SigningKey;
  let t: TestApp;
  const log = capturingLogger();
  let readWrite: string;

  beforeAll(async () => {
    app = await startAuthApp('ES256', { logger: log.logger });
    ({ key, t } = app);
    readWrite = `Bearer ${await mint(key, { sub: 'alice', azp: 'shop-frontend', scope: 'users:read users:write' })}`;
  });

  afterEach(() => resetDatabase(t.dataSource));

  afterAll(() => app?.close());

  it('requires a token on /echo and /info, whatever its scopes', async () => {
    await t.http().post('/echo').send({ a: 1 }).expect(401);
    await t.http().get('/info').expect(401);
    const noScope = `Bearer ${await mint(key, {})}`;
    await t
      .http()
      .post('/echo')
      .set('authorization', noScope)
      .send({ a: 1 })
      .expect(200, { youSent: { a: 1 } });
    const info = await t.http().get('/info').set('authorization', noScope).expect(200);
    expect(info.body.headers.authorization).toBe('[redacted]');
  });

  it('keeps health, static files, the OpenAPI document and /private open to callers without a token', async () => {
    await t.http().get('/health').expect(200, { ok: true });
    await t.http().get('/health/ready').expect(200);
    await t.http().get('/logo.png').expect(200).expect('content-type', 'image/png');
    await t.http().get('/docs-json').expect(200);
    await t.http().get('/docs').expect(200);
    await t
      .http()
      .get('/private')
      .set('x-api-key', TEST_API_KEYS[0])
      .expect(200, { secretData: 42 });
    await t.http().get('/private').expect(401, { error: 'invalid or missing API key' });
    // Unknown routes stay a JSON 404: no route, no guard.
    await t.http().get('/nowhere').expect(404);
  });

  it("declares the bearer scheme, each operation's scope and its 401/403 in /docs-json", async () => {
    const { body: doc } = await t.http().get('/docs-json').expect(200);
    expect(doc.components.securitySchemes.bearer).toMatchObject({ type: 'http', scheme: 'bearer' });
    const operation = (path: string, method: string) => doc.paths[path][method];
    for (const [path, method, scope] of [
      ['/users', 'get', 'users:read'],
      ['/users', 'post', 'users:write'],
      ['/users/{id}', 'delete', 'users:write'],
      ['/users/{id}/posts/{postId}', 'get', 'users:read'],
    ]) {
      expect(operation(path, method)).toMatchObject({
        security: [{ bearer: [] }],
        'x-required-scopes': [scope],
        responses: { '401': expect.any(Object), '403': expect.any(Object) },
      });
    }
    expect(operation('/echo', 'post').security).toEqual([{ bearer: [] }]);
    expect(operation('/health', 'get').security).toEqual([]);
  });

  it('answers 401 before anything else is checked: no 404 or 400 tells whether a resource exists', async () => {
    for (const path of ['/users/999999', '/users/abc', '/users/1/posts/2', '/users?page=0']) {
      const response = await t.http().get(path).expect(401);
      expect(response.headers['www-authenticate']).toBe('Bearer realm="users"');
    }
    await t.http().get('/users/999999').set('authorization', readWrite).expect(404);
  });

  it('changes nothing when a write is refused with 401 or 403, and stores no Idempotency-Key', async () => {
    const created = await t
      .http()
      .post('/users')
      .set('authorization', readWrite)
      .send({ name: 'Ada', email: 'ada@example.com' })
      .expect(201);
    await t
      .http()
      .post('/users/1/posts')
      .set('authorization', readWrite)
      .send({ title: 'Hello' })
      .expect(201);
    const before = await snapshot(t.dataSource);
    const readOnly = `Bearer ${await mint(key, { scope: 'users:read' })}`;
    const writes = [
      { method: 'POST', path: '/users', body: { name: 'Eve' } },
      { method: 'PUT', path: '/users/1', body: { name: 'Eve' } },
      { method: 'PATCH', path: '/users/1', body: { name: 'Eve' } },
      { method: 'DELETE', path: '/users/1' },
      { method: 'POST', path: '/users/1/posts', body: { title: 'Spam' } },
    ];
    for (const [authorization, status] of [
      [undefined, 401],
      ['Bearer forged.token.here', 401],
      [readOnly, 403],
    ] as const) {
      for (const write of writes) {
        const response = await send(t.url, {
          method: write.method,
          path: write.path,
          headers: {
            ...(authorization && { authorization }),
            ...(write.body && { 'content-type': 'application/json' }),
            'idempotency-key': `key-${write.method}-${status}`,
            'if-match': created.headers.etag,
          },
          body: write.body && JSON.stringify(write.body),
        });
        expect([write.method, write.path, response.status]).toEqual([
          write.method,
          write.path,
          status,
        ]);
      }
    }
    expect(await snapshot(t.dataSource)).toEqual(before);
  });

  it("logs the caller's sub and client, never the token, and counts refusals by reason", async () => {
    await t
      .http()
      .get('/users')
      .set('authorization', readWrite)
      .set('x-request-id', 'who-called')
      .expect(200);
    await t.http().get('/users').set('x-request-id', 'nobody-called').expect(401);
    const line = (id: string) => log.lines().find((entry) => entry.requestId === id);
    await eventually('the request lines', () => !!line('who-called') && !!line('nobody-called'));
    expect(line('who-called')).toMatchObject({ auth: { sub: 'alice', clientId: 'shop-frontend' } });
    expect(line('nobody-called')).toMatchObject({
      auth: { rejected: 'missing' },
      res: { statusCode: 401 },
    });
    const token = readWrite.slice('Bearer '.length);
    expect(log.raw()).not.toContain(token);
    expect(log.raw()).not.toContain(token.split('.')[2]);
    const metrics = (await request(t.metricsUrl).get('').expect(200)).text;
    expect(metrics).toMatch(
      /^auth_rejections_total\{transport="http",status="401",reason="missing"\} [1-9]/m,
    );
  });

  it('answers the change feed to users:read only, refusing before the token is looked at', async () => {
    await t.http().post('/users').set('authorization', readWrite).send({ name: 'A' }).expect(201);
    await t.http().get('/users/changes').expect(401);
    const writer = `Bearer ${await mint(key, { scope: 'users:write' })}`;
    const refused = await t
      .http()
      .get('/users/changes?after=garbage')
      .set('authorization', writer)
      .expect(403);
    expect(refused.body).toEqual({
      error: 'the bearer token lacks the scope users:read this operation needs',
    });
    expect(refused.headers['www-authenticate']).toBe(
      'Bearer error="insufficient_scope", scope="users:read"',
    );
    const read = await t.http().get('/users/changes').set('authorization', readWrite).expect(200);
    expect(read.body.events.map((event: { id: string }) => event.id)).toEqual(['1.1']);
  });
});

describe('signing keys: rotation and an unreachable JWKS (e2e)', () => {
  let jwks: JwksServer;
  let t: TestApp | undefined;
  const log = capturingLogger();

  afterEach(async () => {
    await t?.close();
    t = undefined;
    await jwks?.stop();
  });

  const getUsers = (token: string) =>
    t!.http().get('/users').set('authorization', `Bearer ${token}`);

  it('is not ready until the JWKS answers at boot, then serves without a restart', async () => {
    const key = await signingKey('RS256');
    jwks = await new JwksServer([key]).start();
    jwks.down = true;
    t = await createTestApp({ env: authEnv(jwks) });
    await eventually('a first fetch attempt', () => jwks.fetches > 0);
    const notReady = await t.http().get('/health/ready').expect(503);
    expect(notReady.body).toMatchObject({ ok: false, keys: 'not fetched' });
    // The failed fetches are counted, and no fetch has succeeded yet (0: never).
    const failing = (await request(t.metricsUrl).get('').expect(200)).text;
    expect(failing).toMatch(/^auth_jwks_refresh_failures_total [1-9]\d*$/m);
    expect(failing).toMatch(/^auth_jwks_last_refresh_success_timestamp_seconds 0$/m);
    // A token cannot be checked yet: the instance is unavailable, the caller did nothing wrong.
    await getUsers(await mint(key, { scope: 'users:read' })).expect(503, {
      error: 'service unavailable',
    });
    jwks.down = false;
    await eventually(
      'readiness',
      async () => (await t!.http().get('/health/ready')).status === 200,
    );
    await getUsers(await mint(key, { scope: 'users:read' })).expect(200);
    const fetched = (await request(t.metricsUrl).get('').expect(200)).text;
    const at = /^auth_jwks_last_refresh_success_timestamp_seconds (\S+)$/m.exec(fetched)?.[1];
    expect(Math.abs(Number(at) - Date.now() / 1000)).toBeLessThan(60);
  });

  it('takes a rotated key set on refresh: new keys verify, removed keys stop verifying', async () => {
    const [oldKey, newKey] = [await signingKey('RS256'), await signingKey('EdDSA')];
    jwks = await new JwksServer([oldKey]).start();
    t = await createTestApp({ env: authEnv(jwks), logger: log.logger });
    await eventually(
      'readiness',
      async () => (await t!.http().get('/health/ready')).status === 200,
    );
    const oldToken = await mint(oldKey, { scope: 'users:read' });
    await getUsers(oldToken).expect(200);
    // The provider publishes the new key beside the old one, then signs with it.
    jwks.keys = [oldKey, newKey];
    const verifier = t.app.get(TokenVerifierService);
    // What the AUTH_JWKS_REFRESH_S timer runs.
    expect(await verifier.refresh()).toBe(true);
    await getUsers(await mint(newKey, { scope: 'users:read' })).expect(200);
    await getUsers(oldToken).expect(200);
    // The old key is withdrawn: even the token verified (and cached) before is refused.
    jwks.keys = [newKey];
    expect(await verifier.refresh()).toBe(true);
    await getUsers(oldToken).expect(401);
    await getUsers(await mint(newKey, { scope: 'users:read' })).expect(200);

    // The JWKS goes away: the keys in hand keep verifying, and a warning says so.
    jwks.down = true;
    expect(await verifier.refresh()).toBe(false);
    await getUsers(await mint(newKey, { scope: 'users:read' })).expect(200);
    await t.http().get('/health/ready').expect(200);
    expect(log.lines()).toContainEqual(
      expect.objectContaining({
        level: 'warn',
        msg: 'refreshing the token signing keys failed; keeping the keys in hand',
      }),
    );
  });
});
