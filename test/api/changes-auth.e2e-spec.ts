// The change feed with authentication on: scope users:read on HTTP and gRPC, for the list's
// Changes-Token too, and a refusal before any read.
import * as grpc from '@grpc/grpc-js';
import {
  grpcClients,
  listUserChanges,
  watchUserChanges,
  type GrpcClients,
} from '../../scripts/lib/grpc-client.mjs';
import { createTestApp, resetDatabase, type TestApp } from '../support/test-app.js';
import {
  authEnv,
  eventually,
  JwksServer,
  mint,
  signingKey,
  type SigningKey,
} from '../support/identity-provider.js';

const LACKS_READ = 'the bearer token lacks the scope users:read this operation needs';

describe('change feed with authentication on (e2e)', () => {
  let jwks: JwksServer;
  let key: SigningKey;
  let t: TestApp;
  let clients: GrpcClients;

  const bearer = async (scope: string) => `Bearer ${await mint(key, { scope })}`;
  const metadata = (authorization: string) => {
    const result = new grpc.Metadata();
    result.add('authorization', authorization);
    return result;
  };

  beforeAll(async () => {
    key = await signingKey('ES256');
    jwks = await new JwksServer([key]).start();
    t = await createTestApp({ grpc: true, env: authEnv(jwks) });
    clients = grpcClients(t.grpcAddress);
    await eventually('readiness', async () => (await t.http().get('/health/ready')).status === 200);
  });
  afterEach(() => resetDatabase(t.dataSource));
  afterAll(async () => {
    clients?.close();
    await t?.close();
    await jwks?.stop();
  });

  it('answers GET /users/changes to users:read only: 401 without a token, 403 with write alone', async () => {
    await t
      .http()
      .post('/users')
      .set('authorization', await bearer('users:write'))
      .send({ name: 'A' });
    await t.http().get('/users/changes').expect(401);
    const refused = await t
      .http()
      .get('/users/changes?after=garbage')
      .set('authorization', await bearer('users:write'))
      .expect(403);
    // Refused before the token is even looked at.
    expect(refused.body).toEqual({ error: LACKS_READ });
    expect(refused.headers['www-authenticate']).toBe(
      'Bearer error="insufficient_scope", scope="users:read"',
    );
    const read = await t
      .http()
      .get('/users/changes')
      .set('authorization', await bearer('users:read'))
      .expect(200);
    expect(read.body.events.map((e: { id: string }) => e.id)).toEqual(['1.1']);
    const list = await t
      .http()
      .get('/users')
      .set('authorization', await bearer('users:read'));
    expect(list.headers['changes-token']).toEqual(expect.any(String));
  });

  it('answers ListUserChanges and WatchUserChanges to users:read only', async () => {
    const writer = metadata(await bearer('users:write'));
    expect(await listUserChanges(clients.users, {}, { metadata: writer })).toEqual({
      code: grpc.status.PERMISSION_DENIED,
      details: LACKS_READ,
    });
    expect((await listUserChanges(clients.users, {})).code).toBe(grpc.status.UNAUTHENTICATED);
    const refused = watchUserChanges(clients.users, '', { metadata: writer });
    expect(await refused.ended).toEqual({
      code: grpc.status.PERMISSION_DENIED,
      details: LACKS_READ,
    });
    const reader = metadata(await bearer('users:read'));
    expect((await listUserChanges(clients.users, {}, { metadata: reader })).code).toBe(
      grpc.status.OK,
    );
    const watch = watchUserChanges(clients.users, '', { metadata: reader });
    expect((await watch.next()).content).toBe('heartbeat');
    watch.cancel();
  });
});
