// The Express 5 ceiling of the benchmark: the raw baseline's own handlers (./http-server.mjs:
// the same SQL, bodies and headers) mounted on a bare Express 5 app, the version
// @nestjs/platform-express runs on, with nothing else: no Nest, no middleware, no validation
// library, no logging. Whatever it loses against the node:http baseline is the cost of Express
// itself (its router, request/response prototypes and res.json), which no platform-express app can
// get below. gRPC is the same raw grpc-js server as the baseline's.
//
//   DATABASE_URL=postgres://… PORT=3200 GRPC_PORT=5200 node bench/baseline/express-server.mjs
import express from 'express';
import { parseId } from './contract.mjs';
import { createPool, createRoutes, failureOf, requestIdOf, serve } from './http-server.mjs';

export function createExpressApp(pool) {
  const { routes } = createRoutes(pool);
  const app = express();
  app.disable('x-powered-by');
  // As in the service: no ETag hashing of JSON responses.
  app.set('etag', false);

  const reply = (response, requestId, [status, body, headers]) =>
    response
      .status(status)
      .set({ 'x-request-id': requestId, ...headers })
      .json(body);

  /** Mounts a baseline handler; `withId` routes pass the validated `:id`. */
  const mount = (method, path, handler, withId = false) =>
    app[method](path, async (request, response) => {
      const requestId = requestIdOf(request);
      try {
        const url = new URL(request.url, 'http://localhost');
        const id = withId ? parseId(request.params.id) : undefined;
        reply(response, requestId, await handler(request, url, id));
      } catch (error) {
        reply(response, requestId, failureOf(error));
      }
    });

  mount('get', '/health', routes.health);
  mount('get', '/health/ready', routes.ready);
  mount('get', '/users', routes.listUsers);
  mount('post', '/users', routes.createUser);
  mount('get', '/users/:id', routes.getUser, true);
  mount('get', '/users/:id/posts', routes.listPosts, true);
  app.use((request, response) =>
    reply(response, requestIdOf(request), [
      404,
      { error: `no route for ${request.method} ${request.path}` },
    ]),
  );
  return app;
}

if (process.argv[1] === import.meta.filename) {
  const pool = createPool(process.env, 'bench-express');
  await serve('express', createExpressApp(pool), pool);
}
