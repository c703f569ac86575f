import { Injectable, type OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { Server } from 'node:http';
import { MetricsServer } from '../observability/metrics-server.js';
import { HealthService } from './health.service.js';

/**
 * The kubelet's probes on the metrics port (METRICS_PORT) too, with HealthController's answers:
 * `GET /health` and `GET /health/ready`. That port has a listener and an accept queue of its
 * own, so the new connections of a spike, queued in the API port's accept queue ahead of any
 * admission, never delay a probe (docs/overload.md, "Where it stands": 1 to 6 s on the API
 * port against at most 92 ms on this one). The Deployment probes here. Readiness is 503 until
 * the API port listens too: this port opens first, while the app starts.
 */
@Injectable()
export class ProbeRoutes implements OnModuleInit {
  constructor(
    private readonly port: MetricsServer,
    private readonly health: HealthService,
    private readonly adapterHost: HttpAdapterHost,
  ) {}

  onModuleInit(): void {
    this.port.route('/health', () => ({ status: 200, body: { ok: true } }));
    this.port.route('/health/ready', async () => {
      const readiness = await this.health.readiness();
      const ok = readiness.ok && this.apiListening();
      return { status: ok ? 200 : 503, body: { ...readiness, ok } };
    });
  }

  private apiListening(): boolean {
    const server = this.adapterHost.httpAdapter?.getHttpServer() as Server | undefined;
    return server?.listening === true;
  }
}
