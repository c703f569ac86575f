// `npm run relay`: publishes the change feed of users to NATS JetStream, as its own process beside
// the service (docs/events.md, "Publishing to a broker"). Settings from the environment:
//
//   RELAY_DATABASE_URL     PostgreSQL (not PgBouncer) for the single-writer lock     required
//   RELAY_GRPC_ADDRESS     the service's gRPC host:port            default 127.0.0.1:5000
//   RELAY_NATS_URL         the NATS server                         default nats://127.0.0.1:4222
//   RELAY_STREAM           the JetStream stream (made if missing)  default USERS_CHANGES
//   RELAY_SUBJECT_PREFIX   before each subject (users.user.created.v1 ...)   default none
//   RELAY_BEARER_TOKEN     with authentication on: a token with scope users:read
//   RELAY_HOST             address of /health and /metrics         default 0.0.0.0
//   RELAY_METRICS_PORT     port of /health and /metrics            default 9465
//
// One relay publishes at a time: another waits for the lock (scripts/lib/relay-lock.mjs). SIGTERM
// or SIGINT stops it after the message in flight; it exits 1 when the feed refuses its token
// (older than the retention: the stream misses events and needs an operator) or when it loses
// the lock.
import { runRelay } from './lib/feed-relay.mjs';
import { acquireRelayLock } from './lib/relay-lock.mjs';
import { RelayMetrics, serveRelayStatus } from './lib/relay-status.mjs';

const env = process.env;
const log = (line) => process.stderr.write(`${new Date().toISOString()} relay: ${line}\n`);
const metrics = new RelayMetrics();
const settings = {
  grpcAddress: env.RELAY_GRPC_ADDRESS || '127.0.0.1:5000',
  natsUrl: env.RELAY_NATS_URL || 'nats://127.0.0.1:4222',
  stream: env.RELAY_STREAM || 'USERS_CHANGES',
  subjectPrefix: env.RELAY_SUBJECT_PREFIX || '',
  bearerToken: env.RELAY_BEARER_TOKEN || undefined,
  log,
  observe: metrics,
};
if (!env.RELAY_DATABASE_URL) {
  log('RELAY_DATABASE_URL is required: the lock that lets one relay publish at a time');
  process.exit(1);
}
const stop = new AbortController();
for (const signal of ['SIGTERM', 'SIGINT']) process.once(signal, () => stop.abort());
const status = await serveRelayStatus(
  metrics,
  Number(env.RELAY_METRICS_PORT || 9465),
  env.RELAY_HOST || '0.0.0.0',
);
try {
  const lock = await acquireRelayLock(env.RELAY_DATABASE_URL, stop.signal, {
    onWaiting: () => log('another relay holds the lock: waiting for it'),
  });
  if (lock) {
    metrics.setWriter(true);
    log(
      `holding the lock: from ${settings.grpcAddress} to ${settings.natsUrl}, stream ${settings.stream}`,
    );
    const running = new AbortController();
    stop.signal.addEventListener('abort', () => running.abort(), { once: true });
    let lost;
    void lock.lost.then((error) => {
      if (stop.signal.aborted) return;
      lost = error;
      running.abort();
    });
    try {
      await runRelay(settings, running.signal);
    } finally {
      metrics.setWriter(false);
      await lock.release();
    }
    if (lost) throw new Error(`lost the lock (${lost.message}): stopped publishing`);
  }
  log('stopped');
} catch (error) {
  log(error instanceof Error ? error.message : String(error));
  process.exitCode = 1;
} finally {
  status.closeAllConnections();
  status.close();
}
