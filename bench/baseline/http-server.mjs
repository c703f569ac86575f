// The raw baseline of the benchmark: what the service's hot endpoints cost with no framework,
// no ORM and no validation library. One process, like the service: this file serves HTTP with
// node:http and starts the gRPC floor of ./grpc-floor.mjs next to it, both on one `pg` pool of
// the service's default size.
//
// It is written for the benchmark only, minimal but honest: the same SQL work per request as
// src/users/users.service.ts and src/posts/posts.service.ts (the total behind X-Total-Count read
// from the trigger-kept list_counts, the existence check of the user before listing posts, list and count run concurrently on two pooled
// connections), the same JSON bodies and headers (X-Total-Count, Link, Location, x-request-id,
// email omitted when null), and the same basic validation of ids, list queries and POST bodies.
//
//   DATABASE_URL=postgres://… PORT=3100 GRPC_PORT=5100 node bench/baseline/http-server.mjs
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import pg from 'pg';
import {
  badRequest,
  HttpError,
  paginationLinks,
  parseId,
  parseList,
  POST_COLUMNS,
  POST_SORT,
  postJson,
  readBody,
  REQUEST_ID,
  ROLE,
  single,
  USER_COLUMNS,
  USER_SORT,
  userJson,
  validateCreateUser,
} from './contract.mjs';
import { startGrpcServer } from './grpc-floor.mjs';

function send(response, status, body, headers = {}) {
  const json = JSON.stringify(body);
  response.writeHead(status, {
    ...headers,
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': Buffer.byteLength(json),
  });
  response.end(json);
}

/** A database that cannot be reached is 503, as in the service; anything else is 500. */
export function isUnavailable(error) {
  const code = error?.code ?? '';
  return (
    ['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'ENOTFOUND', '57P01', '57P03'].includes(code) ||
    /timeout exceeded when trying to connect|Connection terminated/i.test(error?.message ?? '')
  );
}

/**
 * The endpoints as `handler(request, url, id) -> [status, body, headers?]`, and the router the
 * node:http server uses. Shared with ./express-server.mjs, which mounts the same handlers on
 * Express 5.
 */
export function createRoutes(pool) {
  const findUser = async (id) =>
    (await pool.query(`SELECT ${USER_COLUMNS} FROM users WHERE id = $1 LIMIT 1`, [id])).rows[0];

  /**
   * One page plus its exact total, the two queries in parallel. The total is read from the
   * trigger-kept counts as the service reads it (the sum of the list's slots in list_counts under
   * the same key), not by a COUNT over the rows. LIMIT and OFFSET are validated integers written
   * into the SQL, as the service writes them.
   */
  async function page(table, columns, where, params, countKey, { page, limit, orderBy }) {
    const [items, count] = await Promise.all([
      pool.query(
        `SELECT ${columns} FROM ${table}${where} ORDER BY ${orderBy} LIMIT ${limit} OFFSET ${(page - 1) * limit}`,
        params,
      ),
      pool.query('SELECT coalesce(sum(n), 0)::int AS total FROM list_counts WHERE list = $1', [
        countKey,
      ]),
    ]);
    return { rows: items.rows, total: count.rows[0].total };
  }

  function listHeaders(path, search, list, total) {
    return {
      'X-Total-Count': String(total),
      Link: paginationLinks(path, search, list.page, list.limit, total),
    };
  }

  const routes = {
    async health() {
      return [200, { ok: true }];
    },
    async ready() {
      await pool.query('SELECT 1');
      return [200, { ok: true, database: 'up', shuttingDown: false }];
    },
    async listUsers(_request, url) {
      const role = single(url.searchParams, 'role');
      if (role !== undefined && !ROLE.test(role)) {
        throw badRequest('role must be 1 to 32 characters of a-z, 0-9, _ and -');
      }
      const list = parseList(url.searchParams, USER_SORT);
      const { rows, total } = await page(
        'users',
        USER_COLUMNS,
        role === undefined ? '' : ' WHERE role = $1',
        role === undefined ? [] : [role],
        role === undefined ? 'users' : `users.role:${role}`,
        list,
      );
      const headers = listHeaders(url.pathname, url.search.slice(1), list, total);
      return [200, rows.map(userJson), headers];
    },
    async getUser(_request, _url, id) {
      const row = await findUser(id);
      if (!row) throw new HttpError(404, `user ${id} not found`);
      return [200, userJson(row)];
    },
    async createUser(request) {
      const { name, email, role } = validateCreateUser(await readBody(request));
      try {
        const { rows } = await pool.query(
          `INSERT INTO users (name, email, role) VALUES ($1, $2, $3) RETURNING ${USER_COLUMNS}`,
          [name, email, role],
        );
        return [201, userJson(rows[0]), { Location: `/users/${rows[0].id}` }];
      } catch (error) {
        if (error.code === '23505' && error.constraint === 'users_email_lower_key') {
          throw new HttpError(409, `email ${email} is already used by another user`);
        }
        throw error;
      }
    },
    async listPosts(_request, url, id) {
      if (!(await findUser(id))) throw new HttpError(404, `user ${id} not found`);
      const list = parseList(url.searchParams, POST_SORT);
      const { rows, total } = await page(
        'posts',
        POST_COLUMNS,
        ' WHERE user_id = $1',
        [id],
        `posts.user:${id}`,
        list,
      );
      return [200, rows.map(postJson), listHeaders(url.pathname, url.search.slice(1), list, total)];
    },
  };

  /** [handler, id] for a method and path, or undefined (a JSON 404, as for an unknown route). */
  function route(method, path) {
    const parts = path.split('/');
    if (parts[1] === 'health' && method === 'GET') {
      if (parts.length === 2) return [routes.health];
      if (parts.length === 3 && parts[2] === 'ready') return [routes.ready];
      return undefined;
    }
    if (parts[1] !== 'users') return undefined;
    if (parts.length === 2) {
      if (method === 'GET') return [routes.listUsers];
      if (method === 'POST') return [routes.createUser];
      return undefined;
    }
    if (parts.length === 3 && method === 'GET') return [routes.getUser, parts[2]];
    if (parts.length === 4 && parts[3] === 'posts' && method === 'GET') {
      return [routes.listPosts, parts[2]];
    }
    return undefined;
  }

  return { routes, route };
}

/** The caller's x-request-id when well-formed, else a new UUID (the service's rule). */
export function requestIdOf(request) {
  const incoming = request.headers['x-request-id'];
  return typeof incoming === 'string' && REQUEST_ID.test(incoming) ? incoming : randomUUID();
}

/** [status, {error}] for a thrown error: HttpError as is, 503 when the database is away, else 500. */
export function failureOf(error) {
  if (error instanceof HttpError) return [error.status, { error: error.message }];
  if (isUnavailable(error)) return [503, { error: 'service unavailable' }];
  console.error(error);
  return [500, { error: 'internal server error' }];
}

export function createApp(pool) {
  const { route } = createRoutes(pool);
  return async function handle(request, response) {
    const requestId = requestIdOf(request);
    try {
      const url = new URL(request.url, 'http://localhost');
      const found = route(request.method, url.pathname);
      if (!found) throw new HttpError(404, `no route for ${request.method} ${url.pathname}`);
      const [handler, rawId] = found;
      const id = rawId === undefined ? undefined : parseId(rawId);
      const [status, body, headers] = await handler(request, url, id);
      send(response, status, body, { 'x-request-id': requestId, ...headers });
    } catch (error) {
      const [status, body] = failureOf(error);
      send(response, status, body, { 'x-request-id': requestId });
    }
  };
}

/** A pg pool configured like the service's (size, connect timeout, statement timeout). */
export function createPool(env = process.env, applicationName = 'bench-baseline') {
  const pool = new pg.Pool({
    connectionString: env.DATABASE_URL,
    max: Number(env.DB_POOL_SIZE ?? 10),
    connectionTimeoutMillis: 2000,
    statement_timeout: 5000,
    application_name: applicationName,
  });
  pool.on('error', (error) => console.error('idle client error', error.message));
  return pool;
}

/**
 * Serves `handler` over HTTP on PORT and the raw gRPC server on GRPC_PORT, both on `pool`, until
 * SIGTERM or SIGINT.
 */
export async function serve(name, handler, pool, env = process.env) {
  const host = env.HOST ?? '127.0.0.1';
  const server = http.createServer(handler);
  server.keepAliveTimeout = 5000;
  const grpcServer = await startGrpcServer({ pool, host, port: Number(env.GRPC_PORT ?? 5100) });
  server.listen(Number(env.PORT ?? 3100), host, () => {
    console.log(
      `${name}: HTTP on ${host}:${server.address().port}, gRPC on ${host}:${env.GRPC_PORT}`,
    );
  });
  const stop = () => {
    server.closeAllConnections();
    server.close();
    grpcServer.forceShutdown();
    pool.end().finally(() => process.exit(0));
    setTimeout(() => process.exit(0), 2000).unref();
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}

if (process.argv[1] === import.meta.filename) {
  const pool = createPool();
  await serve('baseline', createApp(pool), pool);
}
