// Fault matrix: PostgreSQL stopped and started again under mixed HTTP and gRPC traffic.
import * as grpc from '@grpc/grpc-js';
import http from 'node:http';
import { healthCheck } from '../../scripts/lib/grpc-client.mjs';
import {
  cluster,
  clusterLog,
  useFaultCluster,
  withLoadedFaultApp,
} from '../support/fault-cluster.js';
import {
  assertNoAcknowledgedWriteLost,
  assertOnlyUnavailable,
  assertSuccessOrUnavailable,
  getUserOf,
  httpCall,
  until,
} from '../support/fault-load.js';

describe('fault matrix: PostgreSQL stopped and restarted (e2e, a cluster of its own)', () => {
  useFaultCluster();

  it('PostgreSQL stopped and restarted under traffic: only 503/UNAVAILABLE while down, recovery without a restart, no acknowledged write lost', async () => {
    await withLoadedFaultApp('fault_restart', async ({ t, clients, load }) => {
      load.phase = 'up';
      await until(
        'writes before the stop',
        () => load.created.size >= 20,
        () => load.summary(),
      );

      load.phase = 'stopping';
      await cluster.server.stop();
      load.phase = 'down';
      await until(
        'HTTP 503s and gRPC UNAVAILABLEs sent while the database is down',
        () =>
          load.count((o) => o.sentIn === 'down' && o.doneIn === 'down' && o.op !== 'grpc') >= 20 &&
          load.count((o) => o.sentIn === 'down' && o.doneIn === 'down' && o.op === 'grpc') >= 3,
        () => load.summary(),
      );
      // Readiness fails, liveness does not (restarting the pod would not help).
      const agent = new http.Agent();
      expect(await httpCall(t.url, agent, 'GET', '/health/ready')).toEqual({
        status: 503,
        body: { ok: false, database: 'down', shuttingDown: false },
      });
      expect(await httpCall(t.url, agent, 'GET', '/health')).toEqual({
        status: 200,
        body: { ok: true },
      });
      await until(
        'gRPC health NOT_SERVING',
        async () => (await healthCheck(clients.health)) === 'NOT_SERVING',
      );

      load.phase = 'starting';
      await cluster.server.start();
      load.phase = 'recovered';
      await until(
        'writes after the restart, by the same service instance',
        () => load.count((o) => o.sentIn === 'recovered' && o.status === 201) >= 20,
        () => `${load.summary()}\nPostgreSQL: ${clusterLog.slice(-5).join('')}`,
      );
      await until(
        'gRPC health SERVING again',
        async () => (await healthCheck(clients.health)) === 'SERVING',
      );
      expect(await httpCall(t.url, agent, 'GET', '/health/ready')).toEqual(
        expect.objectContaining({ status: 200 }),
      );
      agent.destroy();
      await load.stop();

      // Requests sent and answered while PostgreSQL was down: 503 / UNAVAILABLE, nothing else.
      assertOnlyUnavailable(
        load.outcomes.filter((o) => o.sentIn === 'down' && o.doneIn === 'down'),
      );
      // Whatever the phase: success or unavailable; never a 500, a 404 for an acknowledged id, a
      // hang or a dropped connection.
      assertSuccessOrUnavailable(load.outcomes);
      await assertNoAcknowledgedWriteLost(t.dataSource, load);
      for (const [id, name] of [...load.created].slice(0, 50)) {
        expect(await getUserOf(clients, id)).toEqual({ code: grpc.status.OK, reply: { id, name } });
      }
    });
  });
});
