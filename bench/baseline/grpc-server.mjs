// The gRPC half of the raw baseline: users.Users/GetUser on @grpc/grpc-js alone, with the same
// proto, loader options and query as the service (src/users/users.grpc.controller.ts). It runs
// inside the baseline's HTTP process (./http-server.mjs) on the same pool, as the service does.
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { LOADER_OPTIONS, USERS_PROTO_PATH } from '../../scripts/lib/grpc-client.mjs';

const UNAVAILABLE_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', '57P01', '57P03']);

/** Starts the gRPC server and resolves once it listens on host:port. */
export async function startGrpcServer({ pool, host = '127.0.0.1', port }) {
  const definition = protoLoader.loadSync(USERS_PROTO_PATH, LOADER_OPTIONS);
  const { users } = grpc.loadPackageDefinition(definition);
  const server = new grpc.Server({ 'grpc.max_receive_message_length': 64 * 1024 });

  server.addService(users.Users.service, {
    GetUser(call, callback) {
      const { id } = call.request;
      if (!(id > 0)) {
        callback({
          code: grpc.status.INVALID_ARGUMENT,
          details: 'id must be a positive 32-bit integer',
        });
        return;
      }
      if (call.cancelled) {
        callback({ code: grpc.status.CANCELLED, details: 'call cancelled' });
        return;
      }
      // The same row the service loads (UsersService.findOne), of which the reply carries two fields.
      pool
        .query(
          'SELECT id, name, email, role, created_at, updated_at FROM users WHERE id = $1 LIMIT 1',
          [id],
        )
        .then(
          ({ rows }) => {
            if (rows.length === 0) {
              callback({ code: grpc.status.NOT_FOUND, details: `user ${id} not found` });
            } else {
              callback(null, { id: rows[0].id, name: rows[0].name });
            }
          },
          (error) => {
            const unavailable = UNAVAILABLE_CODES.has(error.code);
            if (!unavailable) console.error(error);
            callback({
              code: unavailable ? grpc.status.UNAVAILABLE : grpc.status.INTERNAL,
              details: unavailable ? 'service unavailable' : 'internal error',
            });
          },
        );
    },
  });

  await new Promise((resolve, reject) =>
    server.bindAsync(`${host}:${port}`, grpc.ServerCredentials.createInsecure(), (error) =>
      error ? reject(error) : resolve(),
    ),
  );
  return server;
}
