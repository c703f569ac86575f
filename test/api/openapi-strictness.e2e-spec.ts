// openapi.json is as strict as the service, checked by an independent validator: each request
// below goes through Prism's validation proxy (@stoplight/prism-cli, which compiles the
// document's schemas with Ajv) to the real app. A request the service refuses with 400 must be
// one the document refuses too (Prism reports a request violation), and a request at the edge of
// what the service accepts must pass both. The first group are requests the document once
// allowed while the service refused them.
import { createTestApp, type TestApp } from '../support/test-app.js';
import {
  isSecurityViolation,
  disagrees,
  type OpenApiProxy,
  type PrismViolation,
  startOpenApiProxy,
} from '../support/openapi-proxy.js';

interface Probe {
  method?: string;
  path: string;
  body?: unknown;
  headers?: Record<string, string>;
}

describe('openapi.json refuses what the service refuses (e2e, through Prism)', () => {
  let t: TestApp;
  let proxy: OpenApiProxy;
  let userId: number;
  let cursor: string;

  beforeAll(async () => {
    t = await createTestApp();
    proxy = await startOpenApiProxy(t.url);
    const created = await fetch(`${t.url}/users`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Ada' }),
    });
    userId = ((await created.json()) as { id: number }).id;
    await fetch(`${t.url}/users`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Grace' }),
    });
    const first = await fetch(`${t.url}/users?limit=1&cursor=`);
    cursor = /cursor=([^&>]+)[^>]*>; rel="next"/.exec(first.headers.get('link') ?? '')![1];
  });

  afterAll(async () => {
    await proxy?.close();
    await t?.dataSource.query('TRUNCATE users, posts, idempotency_keys RESTART IDENTITY CASCADE');
    await t?.close();
  });

  /** Sends a probe through Prism: the service's status and Prism's request violations. */
  async function probe({ method = 'GET', path, body, headers = {} }: Probe) {
    const response = await fetch(`${proxy.url}${path.replace('{id}', String(userId))}`, {
      method,
      headers: body === undefined ? headers : { 'content-type': 'application/json', ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    await response.arrayBuffer();
    const violations = JSON.parse(
      response.headers.get('sl-violations') ?? '[]',
    ) as PrismViolation[];
    return {
      status: response.status,
      request: violations.filter(
        (v) => v.location[0] === 'request' && v.severity === 'Error' && !isSecurityViolation(v),
      ),
      response: violations.filter((v) => v.location[0] === 'response'),
    };
  }

  const refused: [string, Probe][] = [
    ['an unknown sort field', { path: '/users?sort=password' }],
    ['a sort field named twice', { path: '/users?sort=name,-name' }],
    ['an empty sort item', { path: '/users?sort=name,' }],
    ['page with a leading zero', { path: '/users?page=01' }],
    ['limit with a sign', { path: '/users?limit=%2B5' }],
    ['limit over 100', { path: '/users?limit=101' }],
    ['an unknown body field', { method: 'POST', path: '/users', body: { name: 'A', admin: true } }],
    ['the read-only id', { method: 'POST', path: '/users', body: { name: 'A', id: 9 } }],
    [
      'the read-only createdAt',
      { method: 'PATCH', path: '/users/{id}', body: { createdAt: '2020-01-01T00:00:00.000Z' } },
    ],
    ['a blank name', { method: 'POST', path: '/users', body: { name: '  \n ' } }],
    ['a name with NUL', { method: 'PUT', path: '/users/{id}', body: { name: 'A\u0000da' } }],
    [
      'a name of 101 characters',
      { method: 'POST', path: '/users', body: { name: 'x'.repeat(101) } },
    ],
    ['a blank post title', { method: 'POST', path: '/users/{id}/posts', body: { title: ' ' } }],
    [
      'an Idempotency-Key with a space',
      {
        method: 'POST',
        path: '/users',
        body: { name: 'A' },
        headers: { 'Idempotency-Key': 'a b' },
      },
    ],
    [
      'an Idempotency-Key of 256 characters',
      {
        method: 'POST',
        path: '/users',
        body: { name: 'A' },
        headers: { 'Idempotency-Key': 'k'.repeat(256) },
      },
    ],
    ['a cursor that is not a token', { path: '/users?cursor=%7B%7D' }],
    ['a cursor with a character added', { path: '/users?cursor={cursor}A' }],
    ['a path id with a leading zero', { path: '/users/01' }],
    ['a path id with a sign', { path: '/users/+1' }],
    ['a path id over 2^31-1', { path: '/users/2147483648' }],
    ['an upper-case role', { path: '/users?role=Admin' }],
  ];

  it.each(refused)('refuses %s, as the service does', async (_what, request) => {
    const result = await probe({ ...request, path: request.path.replace('{cursor}', cursor) });
    expect(result.status).toBe(400);
    expect(result.request.length).toBeGreaterThan(0);
    expect(result.response).toEqual([]);
  });

  const accepted: [string, Probe, number][] = [
    [
      'page, limit and sort at their limits',
      { path: '/users?page=1000000&limit=100&sort=-createdAt,name,id' },
      200,
    ],
    ['a cursor as issued', { path: '/users?limit=1&cursor={cursor}' }, 200],
    ['the empty cursor', { path: '/users?cursor=' }, 200],
    ['a path id given as %31', { path: '/users/%31' }, 200],
    [
      'a name of 100 characters inside padding, stored trimmed',
      { method: 'POST', path: '/users', body: { name: `   ${'x'.repeat(100)}\t` } },
      201,
    ],
    [
      'a name of 100 astral characters (200 UTF-16 units)',
      { method: 'PATCH', path: '/users/{id}', body: { name: '😀'.repeat(100) } },
      200,
    ],
    [
      'a role, a null email and an Idempotency-Key of visible ASCII',
      {
        method: 'POST',
        path: '/users',
        body: { name: 'Lin', role: 'ops_2-b', email: null },
        headers: { 'Idempotency-Key': '~!key:"{}"' },
      },
      201,
    ],
    [
      'a post with a body of 10,000 characters',
      { method: 'POST', path: '/users/{id}/posts', body: { title: 'T', body: 'b'.repeat(10_000) } },
      201,
    ],
    ['the static logo', { path: '/logo.png' }, 200],
  ];

  it.each(accepted)('accepts %s, as the service does', async (_what, request, status) => {
    const result = await probe({ ...request, path: request.path.replace('{cursor}', cursor) });
    expect(result).toEqual({ status, request: [], response: [] });
  });
});

describe('TEST_OPENAPI_PROXY: which exchanges fail a suite', () => {
  const violation = (location: string[], message = 'x', severity = 'Error') =>
    ({ location, message, severity }) as PrismViolation;
  const exchange = (
    status: number,
    violations: PrismViolation[],
    method = 'GET',
    url = '/users',
  ) => ({
    method,
    path: url,
    status,
    violations,
  });

  it('fails on a response the document does not describe, whatever the status', () => {
    expect(disagrees(exchange(200, [violation(['response', 'body', 'id'])]))).toBe(true);
    expect(disagrees(exchange(400, [violation(['response', 'headers'])]))).toBe(true);
  });

  it('fails on a request the document refuses but the service accepted', () => {
    expect(disagrees(exchange(201, [violation(['request', 'body', 'name'])], 'POST'))).toBe(true);
    expect(disagrees(exchange(400, [violation(['request', 'body', 'name'])], 'POST'))).toBe(false);
  });

  it('fails on a served route the document lacks, not on a 404 or the documentation UI', () => {
    const notFound = violation(['request'], 'Selected route not found', 'Warning');
    expect(disagrees(exchange(200, [notFound], 'GET', '/hidden'))).toBe(true);
    expect(disagrees(exchange(404, [notFound], 'GET', '/nope'))).toBe(false);
    expect(disagrees(exchange(200, [notFound], 'GET', '/docs-json'))).toBe(false);
    expect(disagrees(exchange(200, []))).toBe(false);
  });
});
