// The gRPC floor of the benchmark: users.Users/GetUser on the leanest server that is still legal
// behind PgBouncer in transaction mode: @grpc/grpc-js, @grpc/proto-loader with its default
// options, and a `pg` pool, running `SELECT id, name FROM users WHERE id = $1` as an unnamed
// statement; nothing else (no log line, no metrics, no request id, no deadline check). It answers
// what the service answers for a valid id, an invalid one and a missing user. It runs inside the
// baseline's HTTP process (./http-server.mjs) on the same pool, as the service shares its pool.
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { USERS_PROTO_PATH } from '../../scripts/lib/grpc-client.mjs';

const GET_USER = 'SELECT id, name FROM users WHERE id = $1';

/** Starts the gRPC server and resolves once it listens on host:port. */
export async function startGrpcServer({ pool, host = '127.0.0.1', port }) {
  const { users } = grpc.loadPackageDefinition(protoLoader.loadSync(USERS_PROTO_PATH));
  const server = new grpc.Server();

  server.addService(users.Users.service, {
    GetUser({ request: { id } }, callback) {
      if (!(id > 0)) {
        callback({ code: grpc.status.INVALID_ARGUMENT, details: 'id must be a positive integer' });
        return;
      }
      pool.query(GET_USER, [id]).then(
        ({ rows: [user] }) =>
          user
            ? callback(null, user)
            : callback({ code: grpc.status.NOT_FOUND, details: `user ${id} not found` }),
        () => callback({ code: grpc.status.UNAVAILABLE, details: 'service unavailable' }),
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
