// `npm run relay`: publishes the change feed of users to NATS JetStream, as its own process beside
// the service (docs/events.md, "Publishing to a broker"). Settings from the environment:
//
//   RELAY_GRPC_ADDRESS     the service's gRPC host:port            default 127.0.0.1:5000
//   RELAY_NATS_URL         the NATS server                         default nats://127.0.0.1:4222
//   RELAY_STREAM           the JetStream stream (made if missing)  default USERS_CHANGES
//   RELAY_SUBJECT_PREFIX   before each subject (users.user.created.v1 ...)   default none
//   RELAY_BEARER_TOKEN     with authentication on: a token with scope users:read
//
// SIGTERM or SIGINT stops it after the message in flight; it exits 1 when the feed refuses its
// token (older than the retention: the stream misses events and needs an operator).
import { runRelay } from './lib/feed-relay.mjs';

const env = process.env;
const log = (line) => process.stderr.write(`${new Date().toISOString()} relay: ${line}\n`);
const settings = {
  grpcAddress: env.RELAY_GRPC_ADDRESS || '127.0.0.1:5000',
  natsUrl: env.RELAY_NATS_URL || 'nats://127.0.0.1:4222',
  stream: env.RELAY_STREAM || 'USERS_CHANGES',
  subjectPrefix: env.RELAY_SUBJECT_PREFIX || '',
  bearerToken: env.RELAY_BEARER_TOKEN || undefined,
  log,
};
const stop = new AbortController();
for (const signal of ['SIGTERM', 'SIGINT']) process.once(signal, () => stop.abort());
log(`from ${settings.grpcAddress} to ${settings.natsUrl}, stream ${settings.stream}`);
try {
  await runRelay(settings, stop.signal);
  log('stopped');
} catch (error) {
  log(error instanceof Error ? error.message : String(error));
  process.exitCode = 1;
}
