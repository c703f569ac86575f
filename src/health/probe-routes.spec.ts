import { describe, expect, it } from '@jest/globals';
import type { HttpAdapterHost } from '@nestjs/core';
import type { MetricsServer, PortAnswer } from '../observability/metrics-server.js';
import type { HealthService, Readiness } from './health.service.js';
import { ProbeRoutes } from './probe-routes.js';

/** The routes ProbeRoutes puts on the metrics port, over a readiness and an API server given. */
function probes(readiness: Readiness, api: { listening: boolean }) {
  const routes = new Map<string, () => PortAnswer | Promise<PortAnswer>>();
  const port = { route: (path: string, answer: () => PortAnswer) => routes.set(path, answer) };
  const health = { readiness: () => Promise.resolve(readiness) };
  const adapterHost = { httpAdapter: { getHttpServer: () => api } };
  new ProbeRoutes(
    port as unknown as MetricsServer,
    health as unknown as HealthService,
    adapterHost as unknown as HttpAdapterHost,
  ).onModuleInit();
  return (path: string) => Promise.resolve(routes.get(path)!());
}

const READY: Readiness = { ok: true, database: 'up', shuttingDown: false };

describe(ProbeRoutes.name, () => {
  it('answers liveness, and readiness as HealthService has it once the API port listens', async () => {
    const get = probes(READY, { listening: true });
    expect(await get('/health')).toEqual({ status: 200, body: { ok: true } });
    expect(await get('/health/ready')).toEqual({ status: 200, body: READY });
  });

  it('is not ready while the API port does not listen yet, though the rest is', async () => {
    const get = probes(READY, { listening: false });
    expect(await get('/health/ready')).toEqual({ status: 503, body: { ...READY, ok: false } });
    expect(await get('/health')).toEqual({ status: 200, body: { ok: true } });
  });

  it('is not ready when HealthService is not', async () => {
    const down: Readiness = { ok: false, database: 'down', shuttingDown: true };
    const get = probes(down, { listening: true });
    expect(await get('/health/ready')).toEqual({ status: 503, body: down });
  });
});
