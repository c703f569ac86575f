import {
  Inject,
  Injectable,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import { AppConfig } from '../config/app-config.js';
import { ROOT_LOGGER } from './logging.js';
import { MetricsService } from './metrics.service.js';

const CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';
const JSON_TYPE = 'application/json; charset=utf-8';

/** What a route of this port answers: a status and a JSON body. */
export interface PortAnswer {
  status: number;
  body: object;
}

/** An answer as sent: its status, content type and text. */
interface Reply {
  status: number;
  type: string;
  text: string;
}

/**
 * Prometheus `GET /metrics` on its own port (METRICS_PORT), never on the API port: a scraper needs
 * no API access, and a NetworkPolicy or mesh policy can open one port to Prometheus and the other
 * to callers. Other modules add GET routes of their own before the app starts (`route`): the
 * kubelet's probes (ProbeRoutes), which a listener of their own keeps out of the API port's
 * accept queue. A bare node:http server: no middleware, no authentication, nothing else served.
 */
@Injectable()
export class MetricsServer implements OnApplicationBootstrap, OnApplicationShutdown {
  private server?: Server;
  /** What each path answers (GET and HEAD), as it goes on the wire. */
  private readonly routes = new Map<string, () => Promise<Reply>>([
    [
      '/metrics',
      async () => ({
        status: 200,
        type: CONTENT_TYPE,
        text: await this.metrics.registry.metrics(),
      }),
    ],
  ]);

  constructor(
    private readonly config: AppConfig,
    private readonly metrics: MetricsService,
    @Inject(ROOT_LOGGER) private readonly logger: Logger,
  ) {}

  /** The port it listens on (METRICS_PORT, or the one picked for port 0). */
  get port(): number | undefined {
    return (this.server?.address() as AddressInfo | null)?.port;
  }

  /** Serves `GET path` (and HEAD) on this port with `answer`: call before the app starts. */
  route(path: string, answer: () => PortAnswer | Promise<PortAnswer>): void {
    this.routes.set(path, async () => {
      const { status, body } = await answer();
      return { status, type: JSON_TYPE, text: JSON.stringify(body) };
    });
  }

  async onApplicationBootstrap(): Promise<void> {
    const server = createServer((request, response) => {
      const path = (request.url ?? '').split('?')[0];
      const readOnly = request.method === 'GET' || request.method === 'HEAD';
      const route = readOnly ? this.routes.get(path) : undefined;
      if (!route) {
        response.writeHead(404, { 'content-type': JSON_TYPE });
        response.end(JSON.stringify({ error: `no route for ${request.method} ${path}` }));
        return;
      }
      route().then(
        ({ status, type, text }) => {
          response.writeHead(status, { 'content-type': type });
          response.end(request.method === 'HEAD' ? undefined : text);
        },
        (error: unknown) => {
          this.logger.error({ err: error, context: 'Metrics' }, `GET ${path} failed`);
          response.writeHead(500, { 'content-type': JSON_TYPE });
          response.end(JSON.stringify({ error: 'internal server error' }));
        },
      );
    });
    // Prometheus keeps its connection between scrapes (every 15 to 60 s): kept open longer than
    // that, a scrape never meets a connection the server is closing.
    server.keepAliveTimeout = 65_000;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.config.metricsPort, this.config.host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    this.server = server;
    this.logger.info({ context: 'Metrics' }, `metrics on ${this.config.host}:${this.port}/metrics`);
  }

  async onApplicationShutdown(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
