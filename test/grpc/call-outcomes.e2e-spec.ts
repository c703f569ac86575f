// grpc_server_handled_total counts every call with the code its caller saw: calls the
// authentication guard refuses, and calls whose deadline passed before they were answered.
import * as grpc from '@grpc/grpc-js';
import request from 'supertest';
import {
  getUser,
  grpcClients,
  listUserChanges,
  type GrpcClients,
} from '../../scripts/lib/grpc-client.mjs';
import {
  type AuthApp,
  authEnv,
  eventually,
  JwksServer,
  mint,
  startAuthApp,
} from '../support/identity-provider.js';
import { createTestApp, resetDatabase, type TestApp } from '../support/test-app.js';

/** The value of grpc_server_handled_total for one users.Users method and code (0 if absent). */
async function handled(t: TestApp, method: string, code: string): Promise<number> {
  const metrics = (await request(t.metricsUrl).get('').expect(200)).text;
  const labels = `grpc_service="users.Users",grpc_method="${method}",grpc_code="${code}"`;
  const sample = new RegExp(`^grpc_server_handled_total\\{${labels}\\} (\\d+)$`, 'm').exec(metrics);
  return sample ? Number(sample[1]) : 0;
}

function bearer(token: string): grpc.Metadata {
  const metadata = new grpc.Metadata();
  metadata.set('authorization', `Bearer ${token}`);
  return metadata;
}

describe('gRPC call outcomes in grpc_server_handled_total (e2e)', () => {
  let app: AuthApp;
  let clients: GrpcClients;

  beforeAll(async () => {
    app = await startAuthApp('ES256', { grpc: true });
    clients = grpcClients(app.t.grpcAddress);
  });
  afterAll(async () => {
    clients?.close();
    await resetDatabase(app.t.dataSource);
    await app?.close();
  });

  it('counts the calls the guard refuses, on the direct and on Nest’s path', async () => {
    expect((await getUser(clients.users, 1)).code).toBe(grpc.status.UNAUTHENTICATED);
    const writer = bearer(await mint(app.key, { scope: 'users:write' }));
    const refused = await listUserChanges(clients.users, {}, { metadata: writer });
    expect(refused.code).toBe(grpc.status.PERMISSION_DENIED);
    expect(await handled(app.t, 'GetUser', 'UNAUTHENTICATED')).toBe(1);
    expect(await handled(app.t, 'ListUserChanges', 'PERMISSION_DENIED')).toBe(1);
  });

  it('counts a call whose deadline passed while it was handled as DEADLINE_EXCEEDED', async () => {
    const reader = bearer(await mint(app.key, { scope: 'users:read' }));
    const writer = `Bearer ${await mint(app.key, { scope: 'users:write' })}`;
    await app.t
      .http()
      .post('/users')
      .set('authorization', writer)
      .send({ name: 'Ada' })
      .expect(201);
    const before = { ok: await handled(app.t, 'GetUser', 'OK') };
    // The table lock holds the call's query until its caller has given up.
    const lock = app.t.dataSource.createQueryRunner();
    await lock.connect();
    try {
      await lock.startTransaction();
      await lock.query('LOCK TABLE users IN ACCESS EXCLUSIVE MODE');
      const late = await getUser(clients.users, 1, { metadata: reader, deadlineMs: 300 });
      expect(late.code).toBe(grpc.status.DEADLINE_EXCEEDED);
      await lock.commitTransaction();
    } finally {
      await lock.release();
    }
    await eventually('the late call to be counted', async () => {
      return (await handled(app.t, 'GetUser', 'DEADLINE_EXCEEDED')) === 1;
    });
    expect(await handled(app.t, 'GetUser', 'OK')).toBe(before.ok);
    expect(await handled(app.t, 'GetUser', 'CANCELLED')).toBe(0);
  });
});

describe('gRPC calls before the signing keys are loaded (e2e)', () => {
  let jwks: JwksServer;
  let t: TestApp;

  beforeAll(async () => {
    jwks = await new JwksServer().start();
    jwks.down = true;
    t = await createTestApp({ grpc: true, env: authEnv(jwks) });
  });
  afterAll(async () => {
    await t?.close();
    await jwks?.stop();
  });

  it('counts the calls refused with UNAVAILABLE', async () => {
    const clients = grpcClients(t.grpcAddress);
    try {
      expect(await getUser(clients.users, 1, { metadata: bearer('a.b.c') })).toEqual({
        code: grpc.status.UNAVAILABLE,
        details: 'the token signing keys are not available yet',
      });
    } finally {
      clients.close();
    }
    expect(await handled(t, 'GetUser', 'UNAVAILABLE')).toBe(1);
  });
});
