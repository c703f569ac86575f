// Fault matrix: SIGTERM to the built service (as the container starts it) while requests are in
// flight, held on a lock in the database.
import * as grpc from '@grpc/grpc-js';
import http from 'node:http';
import { grpcClients, healthCheck } from '../../scripts/lib/grpc-client.mjs';
import { refusesConnections } from '../../scripts/lib/ports.mjs';
import {
  adminClient,
  blockedSessions,
  createDatabase,
  useFaultCluster,
} from '../support/fault-cluster.js';
import { BOUND_MS, httpCall, Load, until } from '../support/fault-load.js';
import {
  buildService,
  type ServiceProcess,
  startService,
  waitUntilReady,
} from '../support/service-process.js';

describe('fault matrix: the built service stopped under load (e2e, a cluster of its own)', () => {
  useFaultCluster();

  describe('SIGTERM to the built service under load', () => {
    let service: ServiceProcess | undefined;

    // The service as the container runs it: node --import ./dist/src/telemetry.js dist/src/main.js
    // (built when the sources changed).
    beforeAll(() => buildService());

    afterAll(async () => {
      const child = service?.child;
      if (child && child.exitCode === null && child.signalCode === null) {
        child.kill('SIGKILL');
        await service!.exited;
      }
    });

    it('finishes every in-flight HTTP request and gRPC call, then exits 0', async () => {
      const url = await createDatabase('fault_sigterm');
      service = await startService({
        DATABASE_URL: url,
        MIGRATE_ON_BOOT: 'true',
        SHUTDOWN_DRAIN_MS: '300',
        // The default: far longer than the held requests need once the lock is released.
        SHUTDOWN_TIMEOUT_MS: '10000',
        DB_POOL_SIZE: '20',
        DB_STATEMENT_TIMEOUT_MS: '60000',
      });
      const { child, output } = service;
      let exit: { code: number | null; signal: string | null } | undefined;
      void service.exited.then((status) => (exit = status));

      const base = service.url;
      const port = Number(new URL(base).port);
      const probe = new http.Agent();
      await waitUntilReady(service, { timeoutMs: BOUND_MS });

      // Clients stop starting new requests once readiness fails, as the mesh would stop routing
      // here; every request they did start must succeed.
      let routed = true;
      const clients = grpcClients(service.grpcAddress);
      const load = new Load(base, clients, 8, () => routed);
      const admin = await adminClient(url);
      try {
        load.phase = 'serving';
        await until(
          'traffic',
          () => load.created.size >= 30,
          () => load.summary(),
        );

        // Hold the in-flight requests in the database so that they are still running when the
        // service stops accepting connections.
        await admin.query('BEGIN');
        await admin.query('LOCK TABLE users IN ACCESS EXCLUSIVE MODE');
        await until(
          'requests in flight, blocked on the lock',
          async () => (await blockedSessions(url)) >= 4,
        );

        load.phase = 'draining';
        child.kill('SIGTERM');
        await until('readiness to fail', async () => {
          const ready = await httpCall(base, probe, 'GET', '/health/ready');
          return ready.status === 503;
        });
        routed = false;
        expect(await healthCheck(clients.health)).toBe('NOT_SERVING');
        // The drain ends and the HTTP server stops accepting: new connections are refused.
        await until('the HTTP port to close', () => refusesConnections(port));
        const inFlight = await blockedSessions(url);
        load.phase = 'closing';
        await admin.query('ROLLBACK');

        await until(
          'the service to exit',
          () => exit !== undefined,
          () => output(),
        );
        await load.stop();

        expect(inFlight).toBeGreaterThanOrEqual(4);
        expect(exit).toEqual({ code: 0, signal: null });
        // Zero failed requests: every one started got its success answer.
        const failed = load.outcomes.filter(
          (o) => !(o.status === 200 || o.status === 201 || o.status === grpc.status.OK),
        );
        expect(failed).toEqual([]);
        // The requests held across the close were answered after it began.
        expect(load.count((o) => o.doneIn === 'closing')).toBeGreaterThanOrEqual(inFlight);
        const log = output();
        expect(log).toMatch(/stopped/);
        // Every in-flight request ended on its own: the forced close at SHUTDOWN_TIMEOUT_MS (which
        // cuts connections, and would cut requests too) was not needed.
        expect(log).not.toMatch(/still open/);
        const rows: { id: number }[] = (
          await admin.query('SELECT id FROM users WHERE id = ANY($1)', [[...load.created.keys()]])
        ).rows;
        expect(rows).toHaveLength(load.created.size);
      } finally {
        routed = false;
        await admin.query('ROLLBACK').catch(() => undefined);
        await admin.end();
        await load.stop();
        probe.destroy();
        clients.close();
      }
    });
  });
});
