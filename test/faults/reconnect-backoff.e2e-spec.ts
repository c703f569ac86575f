// No reconnect storm: while the database is unreachable behind a proxy that accepts and closes
// every connection (HAProxy or a Kubernetes Service without a backend), a process hammered by
// readiness probes, gRPC health checks, reads and writes opens a bounded number of connections
// (the connection gate: src/database/connection-gate.ts), answers 503 meanwhile, and is back
// within seconds once the database is.
import http from 'node:http';
import {
  getUser,
  grpcClients,
  healthCheck,
  type GrpcClients,
} from '../../scripts/lib/grpc-client.mjs';
import { waitFor } from '../../scripts/lib/service-process.mjs';
import { SERVICE_UNAVAILABLE } from '../expected-errors.js';
import type { TcpProxy } from '../tcp-proxy.js';
import { createTestAppBehindProxy, type TestApp } from '../test-app.js';

const OUTAGE_MS = 3000;
/** Per request kind, so the loops stay bounded in count as well as in time. */
const MAX_REQUESTS = 2000;

async function getStatus(agent: http.Agent, url: string): Promise<number> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { agent }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      })
      .on('error', reject);
  });
}

describe('connection attempts while the database is unreachable (e2e)', () => {
  let proxy: TcpProxy;
  let t: TestApp;
  let clients: GrpcClients;

  beforeAll(async () => {
    ({ proxy, ...t } = await createTestAppBehindProxy({ grpc: true }));
    clients = grpcClients(t.grpcAddress);
  });
  afterAll(async () => {
    clients.close();
    await t.close();
  });

  it('opens a bounded number of connections however often it is asked, and recovers', async () => {
    const created = await t.http().post('/users').send({ name: 'Ada' }).expect(201);
    proxy.drop();
    const acceptedBefore = proxy.accepted;
    const deadline = Date.now() + OUTAGE_MS;
    const agent = new http.Agent({ keepAlive: true });
    const statuses = { ready: [] as number[], read: [] as number[], grpc: [] as string[] };

    const probeReadiness = async () => {
      for (let i = 0; i < MAX_REQUESTS && Date.now() < deadline; i++) {
        statuses.ready.push(await getStatus(agent, `${t.url}/health/ready`));
      }
    };
    const readUser = async () => {
      for (let i = 0; i < MAX_REQUESTS && Date.now() < deadline; i++) {
        statuses.read.push(await getStatus(agent, `${t.url}/users/${created.body.id}`));
      }
    };
    const checkGrpcHealth = async () => {
      for (let i = 0; i < MAX_REQUESTS && Date.now() < deadline; i++) {
        statuses.grpc.push(await healthCheck(clients.health, 'users.Users'));
      }
    };
    const write = async () => {
      const res = await t.http().post('/users').send({ name: 'Bob' });
      return { status: res.status, body: res.body as unknown };
    };
    const [writeDuring] = await Promise.all([
      write(),
      probeReadiness(),
      probeReadiness(),
      readUser(),
      checkGrpcHealth(),
    ]);
    const attempts = proxy.accepted - acceptedBefore;
    agent.destroy();

    // Asked hundreds of times, it answered from what it knew: 503 and NOT_SERVING, quickly.
    expect(statuses.ready.length).toBeGreaterThan(40);
    expect(statuses.read.length).toBeGreaterThan(20);
    expect(statuses.grpc.length).toBeGreaterThan(20);
    expect(writeDuring).toEqual({ status: 503, body: SERVICE_UNAVAILABLE });
    expect(statuses.read.slice(1).every((status) => status === 503)).toBe(true);
    expect(statuses.ready.slice(-10)).toEqual(Array(10).fill(503));
    expect(statuses.grpc.at(-1)).toBe('NOT_SERVING');
    // A retry at once would be thousands a second. With the gate: a first burst of a few attempts
    // 100 ms to 1 s apart, then at most two a second (see connection-gate.ts).
    expect(attempts).toBeGreaterThanOrEqual(2);
    expect(attempts).toBeLessThanOrEqual(15);

    await proxy.restore();
    const restoredAt = Date.now();
    await waitFor(
      'readiness after the restore',
      async () => (await t.http().get('/health/ready')).status === 200,
      5000,
    );
    expect(Date.now() - restoredAt).toBeLessThan(3000);
    await t.http().post('/users').send({ name: 'Cyd' }).expect(201);
    expect((await getUser(clients.users, created.body.id)).reply).toEqual({
      id: created.body.id,
      name: 'Ada',
    });
  });
});
