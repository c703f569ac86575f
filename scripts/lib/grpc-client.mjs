// One @grpc/grpc-js client set-up for the tooling: the users.Users stub loaded from
// proto/users.proto (the gRPC contract, as the service reads it), the standard health stub beside it,
// and GetUser calls that resolve with their status instead of throwing, so that tests and load
// loops can count and compare outcomes.
import path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { protoPath as healthProtoPath } from 'grpc-health-check';

/**
 * @typedef {object} User
 * @property {number} id
 * @property {string} name
 */

/**
 * @typedef {(error: grpc.ServiceError | null, reply?: User) => void} UserCallback
 */

/**
 * A change event as proto/users.proto's UserChangeEvent.
 * @typedef {object} UserChangeEvent
 * @property {string} id
 * @property {string} source
 * @property {string} spec_version
 * @property {string} type
 * @property {string} subject
 * @property {string} time
 * @property {string} sequence
 * @property {string} data_content_type
 * @property {{ id: number; version: number; changed: string[] }} data
 */

/**
 * @typedef {{ page_token?: string; page_size?: number; wait_seconds?: number }} ListUserChangesRequest
 * @typedef {{ events: UserChangeEvent[]; next_page_token: string }} ListUserChangesResponse
 * @typedef {{
 *   event?: UserChangeEvent;
 *   heartbeat?: { time: string };
 *   content?: 'event' | 'heartbeat';
 *   page_token: string;
 * }} WatchUserChangesResponse
 */

/**
 * The users.Users stub (loaded at run time from the proto, so typed here by hand).
 * @typedef {grpc.Client & {
 *   GetUser: ((
 *     request: { id: number },
 *     metadata: grpc.Metadata,
 *     options: grpc.CallOptions,
 *     callback: UserCallback,
 *   ) => grpc.ClientUnaryCall) &
 *     ((request: { id: number }, callback: UserCallback) => grpc.ClientUnaryCall);
 *   ListUserChanges(
 *     request: ListUserChangesRequest,
 *     metadata: grpc.Metadata,
 *     options: grpc.CallOptions,
 *     callback: (error: grpc.ServiceError | null, reply?: ListUserChangesResponse) => void,
 *   ): grpc.ClientUnaryCall;
 *   WatchUserChanges(
 *     request: { page_token?: string },
 *     metadata: grpc.Metadata,
 *   ): grpc.ClientReadableStream<WatchUserChangesResponse>;
 * }} UsersClient
 */

/**
 * @typedef {grpc.Client & {
 *   Check(
 *     request: { service: string },
 *     options: grpc.CallOptions,
 *     callback: (error: grpc.ServiceError | null, reply?: { status: string }) => void,
 *   ): grpc.ClientUnaryCall;
 * }} HealthClient
 */

/**
 * @typedef {object} GrpcClients
 * @property {UsersClient} users
 * @property {HealthClient} health
 * @property {() => void} close
 */

/**
 * @template T
 * @typedef {object} CallResult
 * @property {grpc.status} code
 * @property {T} [reply]
 * @property {string} [details]
 */

/**
 * @typedef {object} CallOptions
 * @property {number} [deadlineMs]
 * @property {grpc.Metadata} [metadata]
 */

/**
 * The service constructors this module loads from the protos.
 * @typedef {{
 *   users: { Users: new (address: string, credentials: grpc.ChannelCredentials) => UsersClient };
 *   grpc: {
 *     health: {
 *       v1: { Health: new (address: string, credentials: grpc.ChannelCredentials) => HealthClient };
 *     };
 *   };
 * }} LoadedServices
 */

export const USERS_PROTO_PATH = path.resolve(
  import.meta.dirname,
  '..',
  '..',
  'proto',
  'users.proto',
);

/** The loader options of the service (src/app.setup.ts) and of the benchmark's raw baseline. */
export const LOADER_OPTIONS = {
  keepCase: true,
  longs: Number,
  enums: String,
  defaults: true,
  oneofs: true,
};

/**
 * @param {string | string[]} files
 * @returns {LoadedServices}
 */
function loadServices(files) {
  return /** @type {LoadedServices} */ (
    /** @type {unknown} */ (grpc.loadPackageDefinition(protoLoader.loadSync(files, LOADER_OPTIONS)))
  );
}

/**
 * A users.Users client on an insecure channel to `address` (host:port).
 * @param {string} address
 * @returns {UsersClient}
 */
export function usersClient(address) {
  const { users } = loadServices(USERS_PROTO_PATH);
  return new users.Users(address, grpc.credentials.createInsecure());
}

/**
 * users.Users and grpc.health.v1.Health clients to one address; `close()` closes both.
 * @param {string} address
 * @returns {GrpcClients}
 */
export function grpcClients(address) {
  const loaded = loadServices([USERS_PROTO_PATH, healthProtoPath]);
  const credentials = grpc.credentials.createInsecure();
  const users = new loaded.users.Users(address, credentials);
  const health = new loaded.grpc.health.v1.Health(address, credentials);
  return {
    users,
    health,
    close: () => {
      users.close();
      health.close();
    },
  };
}

/**
 * GetUser on a users.Users client; resolves with `{ code: OK, reply }` or `{ code, details }`.
 * `deadlineMs` bounds the call (DEADLINE_EXCEEDED after it).
 * @param {UsersClient} client
 * @param {number} id
 * @param {CallOptions} [options]
 * @returns {Promise<CallResult<User>>}
 */
export function getUser(client, id, { deadlineMs = 10_000, metadata = new grpc.Metadata() } = {}) {
  return new Promise((resolve) =>
    client.GetUser({ id }, metadata, { deadline: Date.now() + deadlineMs }, (error, reply) =>
      resolve(
        error ? { code: error.code, details: error.details } : { code: grpc.status.OK, reply },
      ),
    ),
  );
}

/**
 * grpc.health.v1.Health/Check of `service` ('' for the whole server): the status, or `error N`.
 * @param {HealthClient} health
 * @param {string} [service]
 * @param {{ deadlineMs?: number }} [options]
 * @returns {Promise<string>}
 */
export function healthCheck(health, service = '', { deadlineMs = 5000 } = {}) {
  return new Promise((resolve) =>
    health.Check({ service }, { deadline: Date.now() + deadlineMs }, (error, reply) =>
      // A call without an error has a reply.
      resolve(error ? `error ${error.code}` : /** @type {{ status: string }} */ (reply).status),
    ),
  );
}

/**
 * A plain client for raw calls (`getUserRaw`), with no stub and no serialisation.
 * @param {string} address
 * @returns {grpc.Client}
 */
export function rawClient(address) {
  return new grpc.Client(address, grpc.credentials.createInsecure());
}

/**
 * GetUser with an arbitrary message body (any bytes, not necessarily a valid GetUserRequest);
 * resolves with `{ code: OK, reply }` (the reply's bytes) or `{ code, details }`. On a `rawClient`,
 * or on a channel of its own when given an address.
 * @param {grpc.Client | string} clientOrAddress
 * @param {Buffer} message
 * @param {CallOptions} [options]
 * @returns {Promise<CallResult<Buffer>>}
 */
export async function getUserRaw(
  clientOrAddress,
  message,
  { deadlineMs = 10_000, metadata = new grpc.Metadata() } = {},
) {
  if (typeof clientOrAddress === 'string') {
    const client = rawClient(clientOrAddress);
    try {
      return await getUserRaw(client, message, { deadlineMs, metadata });
    } finally {
      client.close();
    }
  }
  const client = clientOrAddress;
  return new Promise((resolve) =>
    client.makeUnaryRequest(
      '/users.Users/GetUser',
      (value) => value,
      (value) => value,
      message,
      metadata,
      { deadline: Date.now() + deadlineMs },
      (error, reply) =>
        resolve(
          error ? { code: error.code, details: error.details } : { code: grpc.status.OK, reply },
        ),
    ),
  );
}

/**
 * ListUserChanges; resolves with `{ code: OK, reply }` or `{ code, details }`.
 * @param {UsersClient} client
 * @param {ListUserChangesRequest} request
 * @param {CallOptions} [options]
 * @returns {Promise<CallResult<ListUserChangesResponse>>}
 */
export function listUserChanges(
  client,
  request,
  { deadlineMs = 60_000, metadata = new grpc.Metadata() } = {},
) {
  return new Promise((resolve) =>
    client.ListUserChanges(
      request,
      metadata,
      { deadline: Date.now() + deadlineMs },
      (error, reply) =>
        resolve(
          error ? { code: error.code, details: error.details } : { code: grpc.status.OK, reply },
        ),
    ),
  );
}

/**
 * @typedef {object} Watch
 * @property {WatchUserChangesResponse[]} messages every message received so far
 * @property {(timeoutMs?: number) => Promise<WatchUserChangesResponse>} next the next message
 *   not yet taken (rejects after `timeoutMs`, or when the stream ends first)
 * @property {Promise<{ code: grpc.status; details: string }>} ended the stream's status
 * @property {() => void} cancel
 */

/**
 * A WatchUserChanges stream from `pageToken`, its messages kept in order as they arrive.
 * @param {UsersClient} client
 * @param {string} [pageToken]
 * @param {{ metadata?: grpc.Metadata }} [options]
 * @returns {Watch}
 */
export function watchUserChanges(client, pageToken = '', { metadata = new grpc.Metadata() } = {}) {
  const call = client.WatchUserChanges({ page_token: pageToken }, metadata);
  /** @type {WatchUserChangesResponse[]} */
  const messages = [];
  let taken = 0;
  /** @type {(() => void) | undefined} */
  let arrived;
  call.on('data', (/** @type {WatchUserChangesResponse} */ message) => {
    messages.push(message);
    arrived?.();
  });
  /** @type {Promise<{ code: grpc.status; details: string }>} */
  const ended = new Promise((resolve) => {
    call.on('error', (/** @type {grpc.ServiceError} */ error) =>
      resolve({ code: error.code, details: error.details }),
    );
    call.on('status', (/** @type {grpc.StatusObject} */ status) => {
      if (status.code === grpc.status.OK) resolve({ code: status.code, details: status.details });
    });
  });
  ended.then(() => arrived?.());
  return {
    messages,
    ended,
    cancel: () => call.cancel(),
    async next(timeoutMs = 15_000) {
      const deadline = Date.now() + timeoutMs;
      while (taken >= messages.length) {
        const left = deadline - Date.now();
        if (left <= 0) throw new Error(`no watch message within ${timeoutMs} ms`);
        const settled = await Promise.race([
          new Promise((resolve) => {
            arrived = () => resolve('arrived');
            setTimeout(() => resolve('timeout'), left).unref();
          }),
          ended.then(() => 'ended'),
        ]);
        if (settled === 'ended' && taken >= messages.length) {
          throw new Error(`the watch ended: ${JSON.stringify(await ended)}`);
        }
      }
      return messages[taken++];
    },
  };
}
