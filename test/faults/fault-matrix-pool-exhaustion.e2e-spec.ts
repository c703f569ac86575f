// Fault matrix: the connection pool exhausted by queries blocked on a table lock.
import * as grpc from '@grpc/grpc-js';
import { SERVICE_UNAVAILABLE } from '../support/expected-errors.js';
import {
  blockedSessions,
  poolOf,
  useFaultCluster,
  withFaultApp,
} from '../support/fault-cluster.js';
import { getUserOf, httpCall, until } from '../support/fault-load.js';

describe('fault matrix: the pool exhausted by blocked queries (e2e, a cluster of its own)', () => {
  useFaultCluster();

  it('a pool exhausted by blocked queries: 503 within the connect/statement timeouts, never a hang; then recovery', async () => {
    await withFaultApp(
      'fault_pool',
      {
        DB_POOL_SIZE: '2',
        DB_CONNECT_TIMEOUT_MS: '500',
        DB_STATEMENT_TIMEOUT_MS: '1000',
        IDEMPOTENCY_WAIT_MS: '500',
      },
      async ({ url, t, clients, admin, agent }) => {
        const created = await httpCall(t.url, agent, 'POST', '/users', { name: 'Ada' });
        expect(created.status).toBe(201);
        const id = (created.body as { id: number }).id;

        // A slow statement: every query on users waits for this transaction's lock.
        await admin.query('BEGIN');
        await admin.query('LOCK TABLE users IN ACCESS EXCLUSIVE MODE');
        const http503 = Array.from({ length: 8 }, (_, n) =>
          n % 2
            ? httpCall(t.url, agent, 'GET', `/users/${id}`)
            : httpCall(t.url, agent, 'POST', '/users', { name: `w${n}` }),
        );
        const grpcUnavailable = Array.from({ length: 3 }, () => getUserOf(clients, id));
        // Liveness does not touch the database; readiness gives up after its own bound.
        expect(await httpCall(t.url, agent, 'GET', '/health')).toEqual({
          status: 200,
          body: { ok: true },
        });
        expect(await httpCall(t.url, agent, 'GET', '/health/ready')).toEqual({
          status: 503,
          body: { ok: false, database: 'down', shuttingDown: false },
        });
        // A keyed create with a bad body is refused for its body, pool or not: it takes no
        // connection before its first statement, and none comes.
        expect(
          await httpCall(
            t.url,
            agent,
            'POST',
            '/users',
            { role: 'x' },
            { 'idempotency-key': 'k1' },
          ),
        ).toEqual({
          status: 400,
          body: expect.objectContaining({ error: expect.stringContaining('name') }),
        });
        // Each answer arrives (the client gives up only after BOUND_MS, far above the timeouts).
        for (const result of await Promise.all(http503)) {
          expect(result).toEqual({ status: 503, body: SERVICE_UNAVAILABLE });
        }
        for (const result of await Promise.all(grpcUnavailable)) {
          expect(result).toEqual({ code: grpc.status.UNAVAILABLE, details: 'service unavailable' });
        }
        // None of the service's statements waits on the lock any more, though it is still held: a
        // read was cancelled; a write's connection was closed (never a write cancelled), and its
        // backend, finding its client gone, stopped (client_connection_check_interval).
        await until(
          'no statement of the service blocked',
          async () => (await blockedSessions(url)) === 0,
        );
        await admin.query('ROLLBACK');

        // The pool gives its connections back and the service answers again, with nothing written
        // by the requests that were refused.
        await until('an idle pool', () => poolOf(t.dataSource).waitingCount === 0);
        expect(await httpCall(t.url, agent, 'GET', `/users/${id}`)).toEqual(
          expect.objectContaining({ status: 200 }),
        );
        expect(await getUserOf(clients, id)).toEqual({
          code: grpc.status.OK,
          reply: { id, name: 'Ada' },
        });
        const { rows } = await admin.query('SELECT count(*)::int AS n FROM users');
        expect(rows[0].n).toBe(1);
      },
    );
  });
});
