// The measured endpoints, in the order they run (writes last: they grow the users table). The
// paths, bodies and headers here drive autocannon; bench/load/wrk-requests.lua builds the same
// requests for wrk from the endpoint's key. `serviceOnly` rows measure features the baselines do
// not have; `expectStatus` is the answer that counts as success (default: any 2xx).
import { BENCH_POST_ROLE, ROLES } from './seed.mjs';

export function endpoints({ users }) {
  let created = 0;
  let patched = 0;
  const runTag = Date.now().toString(36);
  // A unique email per request (no 409s), and a role the list endpoint never asks for.
  const createBody = () => {
    const n = ++created;
    return JSON.stringify({
      name: `Bench User ${n}`,
      email: `bench-${runTag}-${n}@example.com`,
      role: BENCH_POST_ROLE,
    });
  };
  return [
    { key: 'health', name: 'GET /health', path: () => '/health' },
    {
      key: 'user',
      name: 'GET /users/:id',
      path: (next) => `/users/${1 + Math.floor(next() * users)}`,
    },
    {
      key: 'list',
      name: 'GET /users?role=…&sort=-createdAt&limit=20',
      path: (next) =>
        `/users?role=${ROLES[Math.floor(next() * ROLES.length)]}&sort=-createdAt&limit=20`,
    },
    {
      key: 'posts',
      name: 'GET /users/:id/posts',
      path: (next) => `/users/${1 + Math.floor(next() * users)}/posts`,
    },
    {
      // Service only (the baselines have no ETags): a revalidation that matches, 304 no body.
      // Seeded users are at version 1, so their ETag is "<id>.1".
      key: 'user304',
      name: 'GET /users/:id If-None-Match (304)',
      serviceOnly: true,
      expectStatus: 304,
      path: (next) => `/users/${1 + Math.floor(next() * users)}`,
      headers: (path) => ({ 'if-none-match': `"${path.split('/')[2]}.1"` }),
    },
    { key: 'grpc', name: 'gRPC GetUser', grpc: true },
    {
      // Service only (the baselines have no PATCH): an unconditional rename of a seeded user, one
      // UPDATE committing by itself. After the 304 row, which counts on seeded users being at
      // version 1.
      key: 'patch',
      name: 'PATCH /users/:id',
      method: 'PATCH',
      serviceOnly: true,
      path: (next) => `/users/${1 + Math.floor(next() * users)}`,
      body: () => JSON.stringify({ name: `Bench Patch ${runTag}-${++patched}` }),
    },
    {
      key: 'create',
      name: 'POST /users',
      method: 'POST',
      path: () => '/users',
      body: createBody,
    },
    {
      // Service only: the same create with an Idempotency-Key (a new key per request).
      key: 'createKeyed',
      name: 'POST /users with Idempotency-Key',
      method: 'POST',
      serviceOnly: true,
      path: () => '/users',
      body: createBody,
      headers: () => ({ 'idempotency-key': `bench-${runTag}-${created}` }),
    },
  ];
}
