// A rolling restart of two built service processes behind HAProxy, which routes by readiness as a
// Kubernetes Service or a mesh does, under read and write load: no request fails and every 201 is
// in the database. See docs/scaling-out.md. Skipped, saying so, where HAProxy
// is not installed; .ci/run installs it.
import pg from 'pg';
import { haproxyPath, startHaproxy, type Haproxy } from '../../scripts/lib/haproxy.mjs';
import {
  buildService,
  startService,
  waitFor,
  waitUntilReady,
  type ServiceProcess,
} from '../support/service-process.js';
import { scratchDatabase } from '../support/test-app.js';

const DATABASE = 'users_rolling_restart_test';
const LOAD_WORKERS = 4;
const MAX_REQUESTS = 20_000;
const MAX_LOAD_MS = 90_000;

if (!haproxyPath()) {
  describe('rolling restart behind HAProxy', () => {
    it('is skipped: haproxy not installed', () => {
      console.log('haproxy not installed: skipped (apt-get install haproxy)');
    });
  });
}

(haproxyPath() ? describe : describe.skip)('rolling restart behind HAProxy (e2e)', () => {
  let scratch: Awaited<ReturnType<typeof scratchDatabase>>;
  let url: string;
  let haproxy: Haproxy | undefined;
  const services: ServiceProcess[] = [];

  const env = (port?: number, grpcPort?: number): Record<string, string> => ({
    DATABASE_URL: url,
    MIGRATE_ON_BOOT: 'true',
    LOG_LEVEL: 'warn',
    // HAProxy takes a draining process out within 3 checks 500 ms apart.
    SHUTDOWN_DRAIN_MS: '2500',
    ...(port ? { PORT: String(port), GRPC_PORT: String(grpcPort) } : {}),
  });

  beforeAll(async () => {
    buildService();
    scratch = await scratchDatabase(DATABASE);
    url = scratch.url;
  });

  afterAll(async () => {
    await Promise.all(services.map((service) => service.stop()));
    await haproxy?.stop();
    await scratch?.drop();
  });

  it('restarts both processes one after the other under load: no failed request, every 201 stored', async () => {
    for (let i = 0; i < 2; i++) services.push(await startService(env()));
    await Promise.all(services.map((service) => waitUntilReady(service)));
    const proxy = (haproxy = await startHaproxy({ backends: services.map((s) => s.port) }));
    const allUp = async () => Object.values(await proxy.serverStates()).every((s) => s === 'UP');
    await waitFor('both processes UP in HAProxy', allUp);

    const failures: string[] = [];
    const created: number[] = [];
    let sent = 0;
    let stopLoad = false;
    const started = Date.now();
    const worker = async (w: number) => {
      for (let i = 0; !stopLoad && sent < MAX_REQUESTS && Date.now() - started < MAX_LOAD_MS; i++) {
        sent++;
        const write = i % 3 === 0;
        const known = created[created.length - 1];
        const path = write ? '/users' : known && i % 3 === 1 ? `/users/${known}` : '/users?limit=5';
        try {
          const res = await fetch(`${proxy.url}${path}`, {
            method: write ? 'POST' : 'GET',
            headers: { 'content-type': 'application/json' },
            body: write ? JSON.stringify({ name: `load ${w}-${i}` }) : undefined,
            signal: AbortSignal.timeout(10_000),
          });
          const body = (await res.json()) as { id?: number };
          if (res.status !== (write ? 201 : 200)) failures.push(`${res.status} ${path}`);
          else if (write) created.push(body.id!);
        } catch (error) {
          failures.push(`${path}: ${String(error)}`);
        }
      }
    };
    const load = Promise.all(Array.from({ length: LOAD_WORKERS }, (_, w) => worker(w)));

    for (let i = 0; i < services.length; i++) {
      const old = services[i];
      await old.stop();
      // Same ports (HAProxy's server line); startService's own url names the ports it picked.
      const restarted = await startService(env(old.port, old.grpcPort));
      services[i] = { ...restarted, port: old.port, url: `http://127.0.0.1:${old.port}` };
      await waitUntilReady(services[i]);
      await waitFor(`s${i} back UP in HAProxy`, allUp);
    }
    stopLoad = true;
    await load;

    expect(failures).toEqual([]);
    expect(sent).toBeLessThanOrEqual(MAX_REQUESTS + LOAD_WORKERS);
    expect(created.length).toBeGreaterThan(20);
    const stored = new pg.Client({ connectionString: url });
    await stored.connect();
    try {
      const { rows } = await stored.query(
        'SELECT count(*)::int AS n FROM users WHERE id = ANY($1)',
        [created],
      );
      expect(rows[0].n).toBe(created.length);
    } finally {
      await stored.end();
    }
    console.log(
      `rolling restart behind HAProxy: ${sent} requests (${created.length} creates) in ${Date.now() - started} ms, 0 failed`,
    );
  }, 180_000);
});
