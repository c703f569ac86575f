// Fault matrix: pg_terminate_backend of the service's pooled connections, under load and (held on
// a lock) in the middle of one request's statement, for every kind of request.
import * as grpc from '@grpc/grpc-js';
import { type CallResult, healthCheck, type User } from '../../scripts/lib/grpc-client.mjs';
import type { JsonResult } from '../../scripts/lib/http-client.mjs';
import { SERVICE_UNAVAILABLE } from '../support/expected-errors.js';
import {
  adminClient,
  blockedSessions,
  useFaultCluster,
  withFaultApp,
  withLoadedFaultApp,
} from '../support/fault-cluster.js';
import {
  assertNoAcknowledgedWriteLost,
  assertSuccessOrUnavailable,
  getUserOf,
  httpCall,
  until,
} from '../support/fault-load.js';

describe('fault matrix: connections terminated by PostgreSQL (e2e, a cluster of its own)', () => {
  useFaultCluster();

  it("pg_terminate_backend of the pool's connections: at worst 503 for the requests in flight, the pool heals itself", async () => {
    await withLoadedFaultApp('fault_terminate', async ({ url, t, clients, load }) => {
      const admin = await adminClient(url);
      try {
        let terminated = 0;
        for (let round = 1; round <= 10; round++) {
          load.phase = `before kill ${round}`;
          const before = load.successes();
          await until(
            `successes before kill ${round}`,
            () => load.successes() >= before + 20,
            () => load.summary(),
          );
          const { rows } = await admin.query(
            `SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity
            WHERE datname = current_database() AND application_name = 'users-service'`,
          );
          terminated += rows[0].n;
        }
        load.phase = 'after';
        await until(
          'successes after the last kill',
          () => load.count((o) => o.sentIn === 'after' && o.status === 201) >= 20,
          () => load.summary(),
        );
        await load.stop();
        expect(terminated).toBeGreaterThanOrEqual(10);
        assertSuccessOrUnavailable(load.outcomes);
        await assertNoAcknowledgedWriteLost(t.dataSource, load);
        expect(await healthCheck(clients.health)).toBe('SERVING');
      } finally {
        await admin.end();
      }
    });
  });

  it('a request whose connection is terminated in the middle of its statement answers 503 / UNAVAILABLE, and nothing is half-written', async () => {
    await withFaultApp(
      'fault_terminate_one',
      {
        DB_CONNECT_TIMEOUT_MS: '500',
        DB_POOL_SIZE: '4',
      },
      async ({ url, t, clients, admin, agent }) => {
        const created = await httpCall(t.url, agent, 'POST', '/users', { name: 'Ada' });
        const id = (created.body as { id: number }).id;
        const before = await admin.query(
          'SELECT (SELECT count(*) FROM users) AS u, (SELECT count(*) FROM posts) AS p',
        );
        // Each request is held on a lock the test takes, then its session is terminated.
        const cases: [string, string, () => Promise<unknown>][] = [
          [
            'LOCK TABLE users IN ACCESS EXCLUSIVE MODE',
            'GET /users/:id',
            () => httpCall(t.url, agent, 'GET', `/users/${id}`),
          ],
          [
            'LOCK TABLE users IN ACCESS EXCLUSIVE MODE',
            'gRPC GetUser',
            () => getUserOf(clients, id),
          ],
          [
            'LOCK TABLE users IN SHARE MODE',
            'POST /users',
            () => httpCall(t.url, agent, 'POST', '/users', { name: 'Bob' }),
          ],
          [
            `SELECT 1 FROM users WHERE id = ${id} FOR UPDATE`,
            'PATCH /users/:id',
            () => httpCall(t.url, agent, 'PATCH', `/users/${id}`, { name: 'Eve' }),
          ],
          [
            `SELECT 1 FROM users WHERE id = ${id} FOR UPDATE`,
            'POST /users/:id/posts',
            () => httpCall(t.url, agent, 'POST', `/users/${id}/posts`, { title: 'T' }),
          ],
          [
            `SELECT 1 FROM users WHERE id = ${id} FOR UPDATE`,
            'DELETE /users/:id',
            () => httpCall(t.url, agent, 'DELETE', `/users/${id}`),
          ],
        ];
        const answers: Record<string, unknown> = {};
        // Answers that came before the request reached the lock: right after a termination the pool
        // may still hand out the terminated connection once ("Connection terminated unexpectedly").
        const early: unknown[] = [];
        for (const [lock, name, request] of cases) {
          for (let attempt = 1; answers[name] === undefined; attempt++) {
            await admin.query('BEGIN');
            await admin.query(lock);
            let settled = false;
            const answer = request().finally(() => (settled = true));
            await until(
              `${name} to wait on the lock`,
              async () => settled || (await blockedSessions(url)) >= 1,
            );
            if (settled && attempt < 3) {
              early.push(await answer);
              await admin.query('ROLLBACK');
              continue;
            }
            await admin.query(
              `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
              WHERE datname = current_database() AND application_name = 'users-service'
                AND wait_event_type = 'Lock'`,
            );
            answers[name] = await answer;
            await admin.query('ROLLBACK');
          }
        }
        for (const answer of early) {
          expect([SERVICE_UNAVAILABLE, 'service unavailable']).toContainEqual(
            (answer as JsonResult).body ?? (answer as CallResult<User>).details,
          );
        }
        expect(answers).toEqual({
          'GET /users/:id': { status: 503, body: SERVICE_UNAVAILABLE },
          'gRPC GetUser': { code: grpc.status.UNAVAILABLE, details: 'service unavailable' },
          'POST /users': { status: 503, body: SERVICE_UNAVAILABLE },
          'PATCH /users/:id': { status: 503, body: SERVICE_UNAVAILABLE },
          'POST /users/:id/posts': { status: 503, body: SERVICE_UNAVAILABLE },
          'DELETE /users/:id': { status: 503, body: SERVICE_UNAVAILABLE },
        });
        // Nothing was written by the requests that failed, and the service answers again.
        expect(
          await admin.query(
            'SELECT (SELECT count(*) FROM users) AS u, (SELECT count(*) FROM posts) AS p',
          ),
        ).toEqual(expect.objectContaining({ rows: before.rows }));
        await until('a 200 again', async () => {
          const reply = await httpCall(t.url, agent, 'GET', `/users/${id}`);
          return reply.status === 200 && (reply.body as { name: string }).name === 'Ada';
        });
      },
    );
  });
});
