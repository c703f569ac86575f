import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { protoPath as healthProtoPath } from 'grpc-health-check';
import { createRequire } from 'node:module';
import path from 'node:path';
import { jest } from '@jest/globals';
import { PrimaryPool } from '../../src/database/queryable.js';
import { textOf } from '../../src/database/statement.js';
import { TransactionScope } from '../../src/database/transaction-scope.js';
import { DirectGrpcMethods } from '../../src/grpc/direct-grpc-methods.js';
import { USERS_PROTO_PATH } from '../../src/grpc/grpc-options.js';
import { HealthService } from '../../src/health/health.service.js';
import { UsersRepository } from '../../src/users/users.repository.js';
import type { TcpProxy } from '../support/tcp-proxy.js';
import {
  createTestApp,
  createTestAppBehindProxy,
  resetDatabase,
  type TestApp,
} from '../support/test-app.js';

const reflectionProtoDir = path.join(
  path.dirname(createRequire(import.meta.url).resolve('@grpc/reflection')),
  '..',
  'proto',
  'grpc',
  'reflection',
);

/* eslint-disable @typescript-eslint/no-explicit-any -- dynamically loaded gRPC client stubs */
interface Clients {
  users: any;
  health: any;
  reflection: any;
  reflectionAlpha: any;
  close(): void;
}

/** Real @grpc/grpc-js clients, built from proto files alone (ours, health, reflection). */
function connect(address: string): Clients {
  const definition = protoLoader.loadSync(
    [
      USERS_PROTO_PATH,
      healthProtoPath,
      path.join(reflectionProtoDir, 'v1', 'reflection.proto'),
      path.join(reflectionProtoDir, 'v1alpha', 'reflection.proto'),
    ],
    { keepCase: true, enums: String, defaults: true, longs: Number },
  );
  const loaded = grpc.loadPackageDefinition(definition) as any;
  const credentials = grpc.credentials.createInsecure();
  const clients = {
    users: new loaded.users.Users(address, credentials),
    health: new loaded.grpc.health.v1.Health(address, credentials),
    reflection: new loaded.grpc.reflection.v1.ServerReflection(address, credentials),
    reflectionAlpha: new loaded.grpc.reflection.v1alpha.ServerReflection(address, credentials),
  };
  return { ...clients, close: () => Object.values(clients).forEach((client) => client.close()) };
}

function unary<T>(client: any, method: string, request: object, deadlineMs = 5000): Promise<T> {
  return new Promise((resolve, reject) => {
    client[method](
      request,
      { deadline: Date.now() + deadlineMs },
      (error: Error | null, reply: T) => (error ? reject(error) : resolve(reply)),
    );
  });
}

function rejection(promise: Promise<unknown>): Promise<grpc.ServiceError> {
  return promise.then(
    () => {
      throw new Error('the call succeeded');
    },
    (error: grpc.ServiceError) => error,
  );
}

/** Resolves with the first status of a Watch stream that satisfies `wanted`. */
function watchUntil(client: any, service: string, wanted: string): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const seen: string[] = [];
    const call = client.Watch({ service });
    call.on('data', ({ status }: { status: string }) => {
      seen.push(status);
      if (status === wanted) {
        call.cancel();
        resolve(seen);
      }
    });
    call.on('error', (error: grpc.ServiceError) => {
      if (error.code !== grpc.status.CANCELLED) reject(error);
    });
  });
}

function listServices(client: any): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const call = client.ServerReflectionInfo();
    call.on('data', (response: any) => {
      resolve(
        response.list_services_response.service.map((service: { name: string }) => service.name),
      );
      call.end();
    });
    call.on('error', reject);
    call.write({ list_services: '' });
  });
}
/* eslint-enable @typescript-eslint/no-explicit-any */

const UUID = expect.stringMatching(
  /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/,
);

describe('gRPC users.Users (e2e)', () => {
  let t: TestApp;
  let clients: Clients;

  beforeAll(async () => {
    t = await createTestApp({ grpc: true });
    clients = connect(t.grpcAddress);
  });
  afterEach(() => resetDatabase(t.dataSource));
  afterAll(async () => {
    clients.close();
    await t.close();
  });

  const getUser = (id: number, deadlineMs?: number) =>
    unary<{ id: number; name: string }>(clients.users, 'GetUser', { id }, deadlineMs);

  describe('GetUser', () => {
    it('returns id and name only (the proto User has no email)', async () => {
      const created = await t
        .http()
        .post('/users')
        .send({ name: 'Ada', email: 'ada@example.com' })
        .expect(201);
      expect(await getUser(created.body.id)).toEqual({ id: created.body.id, name: 'Ada' });
    });

    it('answers NOT_FOUND "user N not found"', async () => {
      const error = await rejection(getUser(42));
      expect(error.code).toBe(grpc.status.NOT_FOUND);
      expect(error.details).toBe('user 42 not found');
    });

    it.each([0, -1, -2147483648])('answers INVALID_ARGUMENT for id %d', async (id) => {
      const error = await rejection(getUser(id));
      expect(error.code).toBe(grpc.status.INVALID_ARGUMENT);
      expect(error.details).toBe('id must be a positive 32-bit integer');
    });

    it('is answered by its direct handler, outside Nest’s per-call dispatch', async () => {
      const direct = t.app.get(DirectGrpcMethods);
      expect(direct.find('Users', 'GetUser')).toEqual(expect.any(Function));
      const statusOf = jest.spyOn(direct, 'statusOf');
      try {
        expect((await rejection(getUser(987_654))).code).toBe(grpc.status.NOT_FOUND);
        expect(statusOf).toHaveBeenCalledTimes(1);
      } finally {
        statusOf.mockRestore();
      }
    });

    it('answers calls in flight together each with its own user, several calls per statement', async () => {
      const names = Array.from({ length: 20 }, (_, i) => `Batch ${i}`);
      const ids: number[] = [];
      for (const name of names) {
        ids.push((await t.http().post('/users').send({ name }).expect(201)).body.id);
      }
      const missing = Array.from({ length: 10 }, (_, i) => 900_000 + i);
      // Every existing user twice, every missing one once, interleaved.
      const asked = [...ids, ...missing, ...ids].sort(
        (a, b) => ((a * 7919) % 101) - ((b * 7919) % 101),
      );
      const query = jest.spyOn(t.app.get(PrimaryPool), 'query');
      try {
        const answers = await Promise.all(
          asked.map((id) =>
            getUser(id).then(
              (user) => user.name,
              (error: grpc.ServiceError) => error.details,
            ),
          ),
        );
        expect(answers).toEqual(
          asked.map((id) => (ids.includes(id) ? names[ids.indexOf(id)] : `user ${id} not found`)),
        );
        const statements = query.mock.calls.filter(([sql]) => textOf(sql).includes('= ANY('));
        expect(statements.length).toBeGreaterThan(0);
        expect(statements.length).toBeLessThanOrEqual(asked.length / 2);
      } finally {
        query.mockRestore();
      }
    });

    it('reads a summary inside a transaction with a statement of its own, not in a batch', async () => {
      const scope = t.app.get(TransactionScope);
      const users = t.app.get(UsersRepository);
      const rolledBack = new Error('roll back');
      let seen: unknown;
      let id = 0;
      await expect(
        scope.run(async (tx) => {
          [{ id }] = await tx.query<{ id: number }>(
            `INSERT INTO users (name) VALUES ('Uncommitted') RETURNING id`,
          );
          // Only the transaction's own connection sees the row it has not committed.
          seen = await users.findSummaryById(id);
          throw rolledBack;
        }),
      ).rejects.toBe(rolledBack);
      expect(seen).toEqual({ id, name: 'Uncommitted' });
      expect((await rejection(getUser(id))).code).toBe(grpc.status.NOT_FOUND);
    });

    it('answers INVALID_ARGUMENT for a request without an id (proto3 default 0)', async () => {
      const error = await rejection(unary(clients.users, 'GetUser', {}));
      expect(error.code).toBe(grpc.status.INVALID_ARGUMENT);
    });

    it('sees users created over HTTP and not after an HTTP DELETE', async () => {
      const created = await t.http().post('/users').send({ name: 'Grace' }).expect(201);
      expect((await getUser(created.body.id)).name).toBe('Grace');
      await t.http().patch(`/users/${created.body.id}`).send({ name: 'Grace H' }).expect(200);
      expect((await getUser(created.body.id)).name).toBe('Grace H');
      await t.http().delete(`/users/${created.body.id}`).expect(204);
      expect((await rejection(getUser(created.body.id))).code).toBe(grpc.status.NOT_FOUND);
    });

    it.each([
      ["the caller's valid x-request-id", 'grpc-call.1:a', 'grpc-call.1:a'],
      ['a new UUID for an invalid one', 'no spaces allowed', UUID],
      ['a new UUID without one', undefined, UUID],
    ])('sends back x-request-id in the response metadata: %s', async (_case, sent, expected) => {
      const metadata = new grpc.Metadata();
      if (sent !== undefined) metadata.set('x-request-id', sent);
      // Also on an error reply: the id is sent with the response headers, before the handler runs.
      const headers = await new Promise<grpc.Metadata>((resolve, reject) => {
        const call = clients.users.GetUser({ id: 42 }, metadata, () => undefined);
        call.on('metadata', resolve);
        call.on('status', () => reject(new Error('the call ended without response metadata')));
      });
      expect(headers.get('x-request-id')).toEqual([expected]);
    });

    it('ends a call whose deadline passes with DEADLINE_EXCEEDED and keeps serving', async () => {
      const error = await rejection(getUser(1, 0));
      expect(error.code).toBe(grpc.status.DEADLINE_EXCEEDED);
      const created = await t.http().post('/users').send({ name: 'After' }).expect(201);
      expect((await getUser(created.body.id)).name).toBe('After');
    });
  });

  describe('grpc.health.v1.Health', () => {
    it.each(['', 'users.Users'])('Check(%j) is SERVING', async (service) => {
      expect(await unary(clients.health, 'Check', { service })).toEqual({ status: 'SERVING' });
    });

    it('Check of an unknown service is NOT_FOUND; Watch says SERVICE_UNKNOWN', async () => {
      const error = await rejection(unary(clients.health, 'Check', { service: 'nope.Nope' }));
      expect(error.code).toBe(grpc.status.NOT_FOUND);
      expect(await watchUntil(clients.health, 'nope.Nope', 'SERVICE_UNKNOWN')).toEqual([
        'SERVICE_UNKNOWN',
      ]);
    });

    it('Watch reports SERVING', async () => {
      expect(await watchUntil(clients.health, 'users.Users', 'SERVING')).toEqual(['SERVING']);
    });
  });

  describe('server reflection', () => {
    it.each(['reflection', 'reflectionAlpha'] as const)(
      'lists users.Users and Health (%s)',
      async (client) => {
        const services = await listServices(clients[client]);
        expect(services).toEqual(expect.arrayContaining(['users.Users', 'grpc.health.v1.Health']));
      },
    );
  });
});

describe('gRPC when the database is unreachable or shutdown begins (e2e)', () => {
  let proxy: TcpProxy;
  let t: TestApp;
  let clients: Clients;

  beforeAll(async () => {
    ({ proxy, ...t } = await createTestAppBehindProxy({ grpc: true }));
    clients = connect(t.grpcAddress);
  });
  afterAll(async () => {
    clients.close();
    await t.close();
  });

  it('answers UNAVAILABLE and turns NOT_SERVING while the database is down, then recovers', async () => {
    const created = await t.http().post('/users').send({ name: 'Ada' }).expect(201);
    await watchUntil(clients.health, 'users.Users', 'SERVING');

    await proxy.cut();
    const error = await rejection(unary(clients.users, 'GetUser', { id: created.body.id }));
    expect(error.code).toBe(grpc.status.UNAVAILABLE);
    expect(error.details).toBe('service unavailable');
    expect(await watchUntil(clients.health, 'users.Users', 'NOT_SERVING')).toContain('NOT_SERVING');

    await proxy.restore();
    expect(await watchUntil(clients.health, '', 'SERVING')).toContain('SERVING');
    expect(await unary(clients.users, 'GetUser', { id: created.body.id })).toEqual({
      id: created.body.id,
      name: 'Ada',
    });
  });

  it('turns NOT_SERVING from the moment shutdown begins', async () => {
    t.app.get(HealthService).beginShutdown();
    for (const service of ['', 'users.Users']) {
      expect(await unary(clients.health, 'Check', { service })).toEqual({ status: 'NOT_SERVING' });
    }
  });
});
