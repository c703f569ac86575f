// The change feed relay (`npm run relay`, docs/events.md): follows the service's
// users.Users/WatchUserChanges and publishes every event to a NATS JetStream stream, one message
// per event, in feed order. Each message carries the event as CloudEvents JSON, `Nats-Msg-Id`
// `<user>.<version>` (JetStream drops a repeat within its duplicate window) and the feed token
// after it (`Changes-Token`): the relay keeps no state of its own, and after a crash resumes from
// the token of the last message the stream stored, so every event lands there once.
import * as grpc from '@grpc/grpc-js';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect, headers } from '@nats-io/transport-node';
import { usersClient } from './grpc-client.mjs';

/** @import { UserChangeEvent, WatchUserChangesResponse } from './grpc-client.mjs' */

/**
 * @typedef {object} RelaySettings
 * @property {string} grpcAddress the service's gRPC host:port
 * @property {string} natsUrl
 * @property {string} stream JetStream stream name (created when missing)
 * @property {string} subjectPrefix put before the event type (`users.user.updated.v1`) to make
 *   the subject; the stream holds `<prefix>users.user.>`
 * @property {string} [bearerToken] with authentication on, a token with scope users:read
 * @property {(line: string) => void} log
 * @property {import('./relay-status.mjs').RelayMetrics} [observe] counts what the relay does
 */

/** The CloudEvents JSON of an event, as `GET /users/changes` returns it. */
function cloudEvent(/** @type {UserChangeEvent} */ event) {
  return {
    specversion: event.spec_version,
    id: event.id,
    source: event.source,
    type: event.type,
    subject: event.subject,
    time: event.time,
    sequence: event.sequence,
    datacontenttype: event.data_content_type,
    data: event.data,
  };
}

/** gRPC codes after which following on cannot help: the token is expired or refused. */
const FATAL = new Set([
  grpc.status.FAILED_PRECONDITION,
  grpc.status.INVALID_ARGUMENT,
  grpc.status.PERMISSION_DENIED,
  grpc.status.UNAUTHENTICATED,
]);

/**
 * Runs the relay until `signal` aborts (resolves) or the feed refuses its token (rejects: the
 * events after it are gone, the stream needs an operator). Reconnects to the service after any
 * other end of the watch, a second later.
 * @param {RelaySettings} settings
 * @param {AbortSignal} signal
 */
export async function runRelay(settings, signal) {
  const nats = await connect({ servers: settings.natsUrl });
  try {
    const manager = await jetstreamManager(nats);
    const subjects = [`${settings.subjectPrefix}users.user.>`];
    const existing = await manager.streams.info(settings.stream).catch(() => undefined);
    if (!existing) await manager.streams.add({ name: settings.stream, subjects });
    const stream = jetstream(nats);
    const client = usersClient(settings.grpcAddress);
    try {
      while (!signal.aborted) {
        const token = await lastToken(manager, settings.stream);
        const outcome = await relayWatch(client, stream, settings, token, signal);
        if (FATAL.has(outcome.code)) {
          throw new Error(`the feed refused the relay's token: ${outcome.details}`);
        }
        if (!signal.aborted) {
          settings.observe?.onError('watch');
          settings.log(`watch ended (${grpc.status[outcome.code]}): resuming in 1 s`);
          await new Promise((resolve) => setTimeout(resolve, 1000));
        }
      }
    } finally {
      client.close();
    }
  } finally {
    await nats.drain();
  }
}

/**
 * The token of the last message the stream stored, or '' (the feed's start) when empty.
 * @param {import('@nats-io/jetstream').JetStreamManager} manager
 * @param {string} name
 * @returns {Promise<string>}
 */
async function lastToken(manager, name) {
  const { state } = await manager.streams.info(name);
  if (state.last_seq === 0 || state.messages === 0) return '';
  const message = await manager.streams.getMessage(name, { seq: state.last_seq });
  return message?.header?.get('Changes-Token') ?? '';
}

/**
 * One watch from `token`: publishes each event and waits for JetStream's acknowledgement before
 * the next (the stream keeps feed order; the watch is paused meanwhile). Resolves with the
 * watch's final status.
 * @param {import('./grpc-client.mjs').UsersClient} client
 * @param {import('@nats-io/jetstream').JetStreamClient} stream
 * @param {RelaySettings} settings
 * @param {string} token
 * @param {AbortSignal} signal
 * @returns {Promise<{ code: grpc.status; details: string }>}
 */
function relayWatch(client, stream, settings, token, signal) {
  const metadata = new grpc.Metadata();
  if (settings.bearerToken) metadata.set('authorization', `Bearer ${settings.bearerToken}`);
  const call = client.WatchUserChanges({ page_token: token }, metadata);
  const stop = () => call.cancel();
  signal.addEventListener('abort', stop, { once: true });
  let publishing = Promise.resolve();
  // After a failed publish nothing more is published from this watch: the next one resumes
  // from the last stored message, so the stream never skips an event.
  let failed = false;
  return new Promise((resolve) => {
    call.on('data', (/** @type {WatchUserChangesResponse} */ message) => {
      if (message.heartbeat) settings.observe?.onCaughtUp();
      if (!message.event || failed) return;
      const event = message.event;
      call.pause();
      publishing = publishing
        .then(async () => {
          if (failed) return;
          const head = headers();
          head.set('Changes-Token', message.page_token);
          head.set('Content-Type', 'application/cloudevents+json');
          await stream.publish(
            `${settings.subjectPrefix}${event.type}`,
            JSON.stringify(cloudEvent(event)),
            { msgID: event.id, headers: head },
          );
          settings.observe?.onPublished(event.time);
          call.resume();
        })
        .catch((error) => {
          failed = true;
          settings.observe?.onError('publish');
          settings.log(`publishing ${event.id} failed: ${String(error)}`);
          call.cancel();
        });
    });
    const end = (/** @type {{ code: grpc.status; details: string }} */ status) => {
      signal.removeEventListener('abort', stop);
      // What was received is published (or failed) before the next watch reads the last token.
      void publishing.then(() => resolve(status));
    };
    call.on('error', (/** @type {grpc.ServiceError} */ error) => end(error));
    call.on('status', (/** @type {grpc.StatusObject} */ status) => {
      if (status.code === grpc.status.OK) end(status);
    });
  });
}
