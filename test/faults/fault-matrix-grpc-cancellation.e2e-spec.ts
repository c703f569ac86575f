// Fault matrix: gRPC clients that cancel their calls or let their deadlines pass while the
// queries behind them wait on a lock.
import * as grpc from '@grpc/grpc-js';
import { type CallResult, healthCheck, type User } from '../../scripts/lib/grpc-client.mjs';
import { poolOf, useFaultCluster, withFaultApp } from '../support/fault-cluster.js';
import { getUserOf, httpCall, until } from '../support/fault-load.js';

describe('fault matrix: gRPC calls cancelled or past their deadline (e2e, a cluster of its own)', () => {
  useFaultCluster();

  it('gRPC calls cancelled or past their deadline leave no call, pool slot or session behind; the server stays healthy', async () => {
    await withFaultApp(
      'fault_grpc',
      {
        DB_POOL_SIZE: '4',
        DB_CONNECT_TIMEOUT_MS: '2000',
        DB_STATEMENT_TIMEOUT_MS: '60000',
      },
      async ({ t, clients, admin, agent }) => {
        const created = await httpCall(t.url, agent, 'POST', '/users', { name: 'Grace' });
        const id = (created.body as { id: number }).id;
        // grpc-js' own count of the server's calls (channelz), to see that none stays open.
        const server = (
          t.app.getMicroservices()[0] as unknown as {
            serverInstance: { grpcClient: { callTracker: Record<string, number> } };
          }
        ).serverInstance.grpcClient;
        const openCalls = () =>
          server.callTracker.callsStarted -
          server.callTracker.callsSucceeded -
          server.callTracker.callsFailed;
        expect(openCalls()).toBe(0);

        await admin.query('BEGIN');
        await admin.query('LOCK TABLE users IN ACCESS EXCLUSIVE MODE');

        // Calls whose deadline passes while the query waits for the lock.
        const late = await Promise.all(
          Array.from({ length: 20 }, () => getUserOf(clients, id, 100)),
        );
        for (const result of late) expect(result.code).toBe(grpc.status.DEADLINE_EXCEEDED);

        // Calls the client cancels once the server is working on them (queries waiting on the lock).
        const startedBefore = server.callTracker.callsStarted;
        const cancelled: Promise<CallResult<User>>[] = [];
        const calls: grpc.ClientUnaryCall[] = [];
        for (let n = 0; n < 20; n++) {
          cancelled.push(
            new Promise((resolve) => {
              calls.push(
                clients.users.GetUser({ id }, (error: grpc.ServiceError | null) =>
                  resolve({ code: error ? error.code : grpc.status.OK }),
                ),
              );
            }),
          );
        }
        await until(
          'the server to have received every call',
          () => server.callTracker.callsStarted >= startedBefore + 20,
        );
        for (const call of calls) call.cancel();
        for (const result of await Promise.all(cancelled))
          expect(result.code).toBe(grpc.status.CANCELLED);

        await admin.query('ROLLBACK');
        // Nothing left over: every server call ended, every pool client is back and idle, and no
        // session of the service is still running a query.
        await until(
          'no open gRPC call on the server',
          () => openCalls() === 0,
          () => JSON.stringify(server.callTracker),
        );
        await until('an idle pool', () => {
          const pool = poolOf(t.dataSource);
          return pool.waitingCount === 0 && pool.idleCount === pool.totalCount;
        });
        const { rows } = await admin.query(
          `SELECT count(*)::int AS n FROM pg_stat_activity
          WHERE datname = current_database() AND application_name = 'users-service' AND state = 'active'`,
        );
        expect(rows[0].n).toBe(0);

        // And it keeps serving.
        const codes: Record<string, number> = {};
        for (let batch = 0; batch < 10; batch++) {
          for (const { code, reply } of await Promise.all(
            Array.from({ length: 10 }, () => getUserOf(clients, id)),
          )) {
            const key =
              code === grpc.status.OK && reply?.name === 'Grace' ? 'OK' : grpc.status[code];
            codes[key] = (codes[key] ?? 0) + 1;
          }
        }
        expect(codes).toEqual({ OK: 100 });
        expect(await healthCheck(clients.health, 'users.Users')).toBe('SERVING');
        expect(await httpCall(t.url, agent, 'GET', `/users/${id}`)).toEqual(
          expect.objectContaining({ status: 200 }),
        );
      },
    );
  });
});
