// The relay's health and metrics, served on RELAY_METRICS_PORT: `GET /health` (liveness; says
// whether this relay is the writer) and `GET /metrics` (Prometheus). docs/events.md, "Operating
// the relay".
import { createServer } from 'node:http';
import { Counter, Gauge, Registry } from 'prom-client';

/** The relay's metrics, and the hooks feed-relay.mjs calls. */
export class RelayMetrics {
  registry = new Registry();
  /** Whether this relay holds the single-writer lock. */
  isWriter = false;
  writer = new Gauge({
    name: 'relay_lock_held',
    help: '1 while this relay holds the single-writer lock and publishes, else 0 (waiting)',
    registers: [this.registry],
  });
  published = new Counter({
    name: 'relay_events_published_total',
    help: 'Events published to the stream and acknowledged by JetStream',
    registers: [this.registry],
  });
  errors = new Counter({
    name: 'relay_errors_total',
    help: 'Failures: a publish JetStream did not acknowledge, a watch of the feed that broke',
    labelNames: ['stage'],
    registers: [this.registry],
  });
  lag = new Gauge({
    name: 'relay_lag_seconds',
    help: 'How old the last event published was when published; 0 once the feed is caught up',
    registers: [this.registry],
  });

  /** @param {boolean} held */
  setWriter(held) {
    this.isWriter = held;
    this.writer.set(held ? 1 : 0);
  }

  /** @param {string} time the event's CloudEvents `time` */
  onPublished(time) {
    this.published.inc();
    this.lag.set(Math.max(0, (Date.now() - Date.parse(time)) / 1000));
  }

  /** A heartbeat of the watch: nothing left to publish. */
  onCaughtUp() {
    this.lag.set(0);
  }

  /** @param {'publish' | 'watch'} stage */
  onError(stage) {
    this.errors.inc({ stage });
  }
}

/**
 * Serves /health and /metrics on `host:port` (0: a free port); resolves with the server.
 * @param {RelayMetrics} metrics
 * @param {number} port
 * @param {string} host
 * @returns {Promise<import('node:http').Server>}
 */
export async function serveRelayStatus(metrics, port, host) {
  const server = createServer((request, response) => {
    const path = (request.url ?? '').split('?')[0];
    if (path === '/health') {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ ok: true, writer: metrics.isWriter }));
      return;
    }
    if (path !== '/metrics') {
      response.writeHead(404).end();
      return;
    }
    metrics.registry.metrics().then((text) => {
      response.writeHead(200, { 'content-type': metrics.registry.contentType });
      response.end(text);
    });
  });
  await new Promise((resolve) => server.listen(port, host, () => resolve(undefined)));
  return server;
}
