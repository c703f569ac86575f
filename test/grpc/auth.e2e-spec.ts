// gRPC users.Users (GetUser and the change feed) with authentication on: the token in the `authorization` metadata,
// UNAUTHENTICATED and PERMISSION_DENIED as HTTP's 401 and 403; health and reflection stay open.
import * as grpc from '@grpc/grpc-js';
import request from 'supertest';
import {
  getUser,
  grpcClients,
  healthCheck,
  listUserChanges,
  watchUserChanges,
  type GrpcClients,
} from '../../scripts/lib/grpc-client.mjs';
import { capturingLogger } from '../support/capturing-logger.js';
import { resetDatabase, type TestApp } from '../support/test-app.js';
import {
  type AuthApp,
  eventually,
  mint,
  startAuthApp,
  type SigningKey,
} from '../support/identity-provider.js';

describe('gRPC with authentication on (e2e)', () => {
  let app: AuthApp;
  let key: SigningKey;
  let t: TestApp;
  let clients: GrpcClients;
  const log = capturingLogger();

  const metadata = (...authorization: string[]) => {
    const result = new grpc.Metadata();
    for (const value of authorization) result.add('authorization', value);
    return result;
  };

  beforeAll(async () => {
    app = await startAuthApp('EdDSA', { grpc: true, logger: log.logger });
    ({ key, t } = app);
    clients = grpcClients(t.grpcAddress);
    const writer = `Bearer ${await mint(key, { scope: 'users:write' })}`;
    await t.http().post('/users').set('authorization', writer).send({ name: 'Ada' }).expect(201);
  });

  afterAll(async () => {
    clients?.close();
    await resetDatabase(t.dataSource);
    await app?.close();
  });

  it('answers GetUser to a token with users:read in the metadata', async () => {
    const token = await mint(key, { sub: 'grpc-caller', scp: ['users:read'] });
    expect(await getUser(clients.users, 1, { metadata: metadata(`Bearer ${token}`) })).toEqual({
      code: grpc.status.OK,
      reply: { id: 1, name: 'Ada' },
    });
    await eventually('the call line', () =>
      log
        .lines()
        .some((line) => (line.auth as { sub?: string } | undefined)?.sub === 'grpc-caller'),
    );
  });

  it('answers UNAUTHENTICATED without metadata, before looking the user up', async () => {
    for (const id of [1, 999_999, 0]) {
      expect(await getUser(clients.users, id)).toEqual({
        code: grpc.status.UNAUTHENTICATED,
        details: 'a bearer token is required: send Authorization: Bearer <token>',
      });
    }
  });

  it('answers UNAUTHENTICATED to an invalid token or another scheme', async () => {
    const expired = await mint(key, { scope: 'users:read' }, { expiresIn: -120 });
    expect(await getUser(clients.users, 1, { metadata: metadata(`Bearer ${expired}`) })).toEqual({
      code: grpc.status.UNAUTHENTICATED,
      details: 'the bearer token has expired',
    });
    // Two values cannot even be sent: HTTP/2 (Node's, under grpc-js) allows one authorization
    // field, and the client fails the call itself. The guard refuses them too (bearer.spec.ts).
    const valid = `Bearer ${await mint(key, { scope: 'users:read' })}`;
    expect(await getUser(clients.users, 1, { metadata: metadata(valid, valid) })).toEqual({
      code: grpc.status.INTERNAL,
      details: '"authorization" metadata cannot have multiple values',
    });
    expect((await getUser(clients.users, 1, { metadata: metadata('Basic eDp5') })).code).toBe(
      grpc.status.UNAUTHENTICATED,
    );
  });

  it('answers PERMISSION_DENIED to a valid token without users:read', async () => {
    const writer = `Bearer ${await mint(key, { scope: 'users:write' })}`;
    expect(await getUser(clients.users, 1, { metadata: metadata(writer) })).toEqual({
      code: grpc.status.PERMISSION_DENIED,
      details: 'the bearer token lacks the scope users:read this operation needs',
    });
    const metrics = (await request(t.metricsUrl).get('').expect(200)).text;
    expect(metrics).toMatch(
      /^auth_rejections_total\{transport="grpc",status="PERMISSION_DENIED",reason="insufficient_scope"\} [1-9]/m,
    );
  });

  it('answers ListUserChanges and WatchUserChanges to users:read only', async () => {
    const writer = metadata(`Bearer ${await mint(key, { scope: 'users:write' })}`);
    const lacksRead = {
      code: grpc.status.PERMISSION_DENIED,
      details: 'the bearer token lacks the scope users:read this operation needs',
    };
    expect(await listUserChanges(clients.users, {}, { metadata: writer })).toEqual(lacksRead);
    expect(await watchUserChanges(clients.users, '', { metadata: writer }).ended).toEqual(
      lacksRead,
    );
    expect((await listUserChanges(clients.users, {})).code).toBe(grpc.status.UNAUTHENTICATED);
    const reader = metadata(`Bearer ${await mint(key, { scope: 'users:read' })}`);
    const page = await listUserChanges(clients.users, {}, { metadata: reader });
    expect(page.reply?.events.map((event) => event.id)).toEqual(['1.1']);
    const watch = watchUserChanges(clients.users, '', { metadata: reader });
    expect((await watch.next()).event?.id).toBe('1.1');
    watch.cancel();
  });

  it('keeps grpc.health.v1 open', async () => {
    expect(await healthCheck(clients.health, '')).toBe('SERVING');
    expect(await healthCheck(clients.health, 'users.Users')).toBe('SERVING');
  });
});
