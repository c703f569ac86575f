// One @grpc/grpc-js client set-up for the tooling: the users.Users stub loaded from
// proto/users.proto (the gRPC contract, as the service reads it), the standard health stub beside it,
// and GetUser calls that resolve with their status instead of throwing, so that tests and load
// loops can count and compare outcomes.
import path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { protoPath as healthProtoPath } from 'grpc-health-check';

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

/** A users.Users client on an insecure channel to `address` (host:port). */
export function usersClient(address) {
  const { users } = grpc.loadPackageDefinition(
    protoLoader.loadSync(USERS_PROTO_PATH, LOADER_OPTIONS),
  );
  return new users.Users(address, grpc.credentials.createInsecure());
}

/** users.Users and grpc.health.v1.Health clients to one address; `close()` closes both. */
export function grpcClients(address) {
  const loaded = grpc.loadPackageDefinition(
    protoLoader.loadSync([USERS_PROTO_PATH, healthProtoPath], LOADER_OPTIONS),
  );
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

/** grpc.health.v1.Health/Check of `service` ('' for the whole server): the status, or `error N`. */
export function healthCheck(health, service = '', { deadlineMs = 5000 } = {}) {
  return new Promise((resolve) =>
    health.Check({ service }, { deadline: Date.now() + deadlineMs }, (error, reply) =>
      resolve(error ? `error ${error.code}` : reply.status),
    ),
  );
}

/** A plain client for raw calls (`getUserRaw`), with no stub and no serialisation. */
export function rawClient(address) {
  return new grpc.Client(address, grpc.credentials.createInsecure());
}

/**
 * GetUser with an arbitrary message body (any bytes, not necessarily a valid GetUserRequest);
 * resolves with `{ code: OK, reply }` (the reply's bytes) or `{ code, details }`. On a `rawClient`,
 * or on a channel of its own when given an address.
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
