// Who may call /scim/v2 with authentication on: a JWT with the scope scim, or a static provider
// token whose SHA-256 is in SCIM_TOKEN_SHA256. Refusals are SCIM errors and change nothing.
import { createHash } from 'node:crypto';
import { type AuthApp, mint, startAuthApp } from '../support/identity-provider.js';
import { CORE_USER, scimError, SCIM_TYPE } from '../support/scim-api.js';
import { createTestApp, resetDatabase, type TestApp } from '../support/test-app.js';

const PROVIDER_TOKEN = 'provider-secret-0123456789';

describe('SCIM authentication (e2e)', () => {
  let auth: AuthApp;

  beforeAll(async () => {
    const digest = createHash('sha256').update(PROVIDER_TOKEN).digest('hex');
    auth = await startAuthApp('RS256', {
      env: { SCIM_TOKEN_SHA256: `${'0'.repeat(64)},${digest}` },
    });
  });
  afterEach(() => resetDatabase(auth.t.dataSource));
  afterAll(() => auth?.close());

  const users = (authorization?: string) => {
    const request = auth.t.http().get('/scim/v2/Users/999999');
    return authorization === undefined ? request : request.set('Authorization', authorization);
  };
  const create = (authorization: string) =>
    auth.t
      .http()
      .post('/scim/v2/Users')
      .set('Authorization', authorization)
      .set('Content-Type', SCIM_TYPE)
      .send(JSON.stringify({ schemas: [CORE_USER], userName: 'ada' }));

  it('answers 401 in the SCIM shape without a token, or with an unknown one, before any lookup', async () => {
    for (const authorization of [
      undefined,
      'Bearer not-a-known-token',
      `Basic ${PROVIDER_TOKEN}`,
    ]) {
      const res = await users(authorization).expect(401);
      expect(res.headers['content-type']).toMatch(/^application\/scim\+json/);
      expect(res.headers['www-authenticate']).toMatch(/^Bearer realm="users"/);
      expect(res.body).toEqual(scimError(401));
    }
  });

  it('admits the static provider token', async () => {
    await users(`Bearer ${PROVIDER_TOKEN}`).expect(404);
    await create(`Bearer ${PROVIDER_TOKEN}`).expect(201);
  });

  it('admits a JWT with the scope scim, and refuses one without it with 403', async () => {
    const scim = await mint(auth.key, { scope: 'scim' });
    await users(`Bearer ${scim}`).expect(404);
    const rest = await mint(auth.key, { scope: 'users:read users:write' });
    const refused = await create(`Bearer ${rest}`).expect(403);
    expect(refused.body).toEqual(scimError(403));
    const list = await auth.t.http().get('/scim/v2/Users').set('Authorization', `Bearer ${scim}`);
    expect(list.body.totalResults).toBe(0);
  });
});

describe('SCIM with authentication off (AUTH_MODE=none) (e2e)', () => {
  let t: TestApp;

  beforeAll(async () => {
    const digest = createHash('sha256').update(PROVIDER_TOKEN).digest('hex');
    t = await createTestApp({ env: { AUTH_MODE: 'none', SCIM_TOKEN_SHA256: digest } });
  });
  afterEach(() => resetDatabase(t.dataSource));
  afterAll(() => t.close());

  it('serves the routes to anyone, as every other route, even with provider tokens configured', async () => {
    for (const authorization of [undefined, `Bearer ${PROVIDER_TOKEN}`, 'Bearer unknown']) {
      const request = t.http().get('/scim/v2/Users');
      const res = await (authorization ? request.set('Authorization', authorization) : request);
      expect([res.status, res.body.totalResults]).toEqual([200, 0]);
    }
    await t
      .http()
      .post('/scim/v2/Users')
      .set('Content-Type', SCIM_TYPE)
      .send(JSON.stringify({ schemas: [CORE_USER], userName: 'ada' }))
      .expect(201);
  });
});
