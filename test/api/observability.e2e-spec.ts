import * as grpc from '@grpc/grpc-js';
import http from 'node:http';
import request from 'supertest';
import { getUser, usersClient, type UsersClient } from '../../scripts/lib/grpc-client.mjs';
import { send } from '../../scripts/lib/http-client.mjs';
import { waitFor } from '../../scripts/lib/service-process.mjs';
import { ChangesPoller } from '../../src/changes/changes-poller.js';
import { HealthService } from '../../src/health/health.service.js';
import { capturingLogger } from '../support/capturing-logger.js';
import { createTestApp, resetDatabase, TEST_API_KEYS, type TestApp } from '../support/test-app.js';

/** GET over a keep-alive connection (supertest asks for `Connection: close`). */
async function keepAliveGet(url: string, path: string): Promise<http.IncomingHttpHeaders> {
  const agent = new http.Agent({ keepAlive: true });
  try {
    return (await send(url, { path, agent })).headers;
  } finally {
    agent.destroy();
  }
}

describe('logs, metrics, OpenAPI and HTTP headers (e2e)', () => {
  const captured = capturingLogger();
  let t: TestApp;
  let client: UsersClient;

  beforeAll(async () => {
    t = await createTestApp({ grpc: true, logger: captured.logger });
    client = usersClient(t.grpcAddress);
  });
  afterEach(() => resetDatabase(t.dataSource));
  afterAll(async () => {
    client.close();
    await t.close();
  });

  it('writes one JSON line per HTTP request with route template, status, duration and request id', async () => {
    await t
      .http()
      .get('/users/77')
      .set('x-request-id', 'log-test-1')
      .set('x-api-key', TEST_API_KEYS[0])
      .expect(404);
    const line = captured.lines().find((entry) => entry.requestId === 'log-test-1');
    expect(line).toEqual(
      expect.objectContaining({
        level: 'info',
        msg: 'GET /users/:id 404',
        route: '/users/:id',
        req: { method: 'GET', path: '/users/77' },
        res: { statusCode: 404 },
        durationMs: expect.any(Number),
      }),
    );
    expect(captured.lines().filter((entry) => entry.requestId === 'log-test-1')).toHaveLength(1);
  });

  it('logs requests rejected before routing (malformed JSON) too', async () => {
    await t
      .http()
      .post('/users')
      .set('x-request-id', 'log-test-2')
      .set('content-type', 'application/json')
      .send('{')
      .expect(400);
    expect(captured.lines().find((entry) => entry.requestId === 'log-test-2')).toEqual(
      expect.objectContaining({ res: { statusCode: 400 } }),
    );
  });

  it('never writes an API key, cookie or authorization header to the log', async () => {
    await t
      .http()
      .get('/private')
      .set('x-api-key', TEST_API_KEYS[1])
      .set('authorization', 'Bearer top-secret-token')
      .set('cookie', 'session=top-secret-cookie')
      .expect(200);
    await t.http().get('/private').set('x-api-key', 'guessed-key-123').expect(401);
    const raw = captured.raw();
    for (const secret of [
      ...TEST_API_KEYS,
      'guessed-key-123',
      'top-secret-token',
      'top-secret-cookie',
    ]) {
      expect(raw).not.toContain(secret);
    }
  });

  it('writes one line per gRPC call with method, code, duration and request id', async () => {
    const metadata = new grpc.Metadata();
    metadata.set('x-request-id', 'grpc-log-1');
    const { code } = await getUser(client, 4242, { metadata });
    expect(code).toBe(grpc.status.NOT_FOUND);
    const line = captured.lines().find((entry) => entry.requestId === 'grpc-log-1');
    expect(line).toEqual(
      expect.objectContaining({
        msg: 'gRPC users.Users/GetUser NOT_FOUND',
        grpc: { method: 'users.Users/GetUser', code: 'NOT_FOUND' },
        durationMs: expect.any(Number),
      }),
    );
  });

  it('records a request whose caller left before its answer, as status 499', async () => {
    const { next } = (await t.http().get('/users/changes').expect(200)).body as { next: string };
    const gone = http.get(new URL(`/users/changes?wait=30&after=${next}`, t.url), {
      headers: { 'x-request-id': 'log-test-gone' },
    });
    gone.on('error', () => {});
    await waitFor('the long poll to wait', () =>
      Promise.resolve(t.app.get(ChangesPoller).waiting === 1),
    );
    gone.destroy();
    await waitFor('its line', () =>
      Promise.resolve(captured.lines().some((entry) => entry.requestId === 'log-test-gone')),
    );
    expect(captured.lines().find((entry) => entry.requestId === 'log-test-gone')).toEqual(
      expect.objectContaining({
        msg: 'GET /users/changes 499',
        res: { statusCode: 499 },
        durationMs: expect.any(Number),
      }),
    );
    const metrics = (await request(t.metricsUrl).get('').expect(200)).text;
    expect(metrics).toMatch(
      /^http_request_duration_seconds_count\{method="GET",route="\/users\/changes",status="499"\} 1$/m,
    );
  });

  it('exposes Prometheus metrics on METRICS_PORT only, not on the API port', async () => {
    await t.http().get('/metrics').expect(404, { error: 'no route for GET /metrics' });
    const metrics = await request(t.metricsUrl).get('').expect(200);
    expect(metrics.text).toContain('http_request_duration_seconds');
    // Its port serves nothing else.
    await request(t.metricsPortUrl('/users')).get('').expect(404);
  });

  it('exposes Prometheus metrics: HTTP by route template, gRPC by code, pool gauges, process', async () => {
    await t.http().get('/users/5').expect(404);
    await getUser(client, 0);
    const res = await request(t.metricsUrl).get('').expect(200);
    expect(res.headers['content-type']).toBe('text/plain; version=0.0.4; charset=utf-8');
    expect(res.text).toMatch(
      /http_request_duration_seconds_count\{method="GET",route="\/users\/:id",status="404"\} [1-9]/,
    );
    expect(res.text).toMatch(
      /grpc_server_handled_total\{grpc_service="users.Users",grpc_method="GetUser",grpc_code="INVALID_ARGUMENT"\} [1-9]/,
    );
    expect(res.text).toMatch(/db_pool_connections [1-9]/);
    expect(res.text).toMatch(/db_pool_waiting_requests 0/);
    expect(res.text).toMatch(/process_resident_memory_bytes \d+/);
    // Authentication is off here: nothing fetched, nothing failed.
    expect(res.text).toMatch(/^auth_jwks_refresh_failures_total 0$/m);
    expect(res.text).toMatch(/^auth_jwks_last_refresh_success_timestamp_seconds 0$/m);
    // Unknown paths share one label value, so scanners cannot blow up the series count.
    await t.http().get('/random-1').expect(404);
    await t.http().get('/random-2').expect(404);
    const after = await request(t.metricsUrl).get('').expect(200);
    expect(after.text).toMatch(
      /http_request_duration_seconds_count\{method="GET",route="\(unmatched\)",status="404"\} [2-9]/,
    );
    expect(after.text).not.toContain('random-1');
  });

  it('serves an OpenAPI 3 document describing every route of the API', async () => {
    const { body: doc } = await t.http().get('/docs-json').expect(200);
    expect(doc.openapi).toMatch(/^3\./);
    const expected: Record<string, string[]> = {
      '/users': ['get', 'post'],
      '/users/{id}': ['get', 'put', 'patch', 'delete'],
      '/users/{id}/posts': ['get', 'post'],
      '/users/{id}/posts/{postId}': ['get'],
      '/health': ['get'],
      '/health/ready': ['get'],
      '/echo': ['post'],
      '/info': ['get'],
      '/private': ['get'],
    };
    for (const [path, methods] of Object.entries(expected)) {
      expect(Object.keys(doc.paths[path] ?? {}).sort()).toEqual([...methods].sort());
    }
    expect(doc.components.schemas.ErrorBodyDto).toEqual(
      expect.objectContaining({
        required: ['error'],
        properties: expect.objectContaining({
          error: { type: 'string', example: expect.any(String), description: expect.any(String) },
        }),
      }),
    );
    const create = doc.paths['/users'].post;
    expect(Object.keys(create.responses).sort()).toEqual([
      '201',
      '400',
      '401',
      '403',
      '409',
      '413',
      '415',
      '422',
      '500',
      '503',
    ]);
    expect(create.requestBody.content['application/json'].schema.$ref).toBe(
      '#/components/schemas/CreateUserDto',
    );
    const list = doc.paths['/users'].get;
    expect(list.parameters.map((p: { name: string }) => p.name).sort()).toEqual([
      'active',
      'cursor',
      'limit',
      'page',
      'role',
      'sort',
    ]);
    expect(Object.keys(list.responses['200'].headers)).toEqual([
      'X-Total-Count',
      'Link',
      'Changes-Token',
      'x-request-id',
    ]);
    expect(doc.paths['/private'].get.security).toEqual([{ 'api-key': [] }]);
    // Every response documents x-request-id; routes without an API key say they need none.
    type Operation = { security?: unknown; responses: Record<string, { headers?: object }> };
    for (const item of Object.values<Record<string, Operation>>(doc.paths)) {
      for (const operation of Object.values(item)) {
        expect(operation.security).toBeDefined();
        for (const response of Object.values(operation.responses)) {
          expect((response.headers as Record<string, unknown>)?.['x-request-id']).toEqual({
            $ref: '#/components/headers/x-request-id',
          });
        }
      }
    }
    expect(
      Object.keys(doc.paths['/users/{id}'].patch.requestBody.content as object).sort(),
    ).toEqual(['application/json', 'application/merge-patch+json']);
  });

  it('serves the Swagger UI under the security headers (no inline scripts)', async () => {
    const res = await t.http().get('/docs').expect(200);
    expect(res.headers['content-type']).toContain('text/html');
    expect(res.headers['content-security-policy']).toContain("script-src 'self'");
    const scripts = [...res.text.matchAll(/<script([^>]*)>([\s\S]*?)<\/script>/g)];
    expect(scripts.length).toBeGreaterThan(0);
    for (const [, attributes, inline] of scripts) {
      expect(inline.trim()).toBe('');
      const src = /src="\.?\/?([^"]+)"/.exec(attributes)?.[1];
      expect(src).toBeDefined();
      await t
        .http()
        .get(`/docs/${src!.replace(/^docs\//, '')}`)
        .expect(200);
    }
  });

  it('sends security headers and keeps idle connections open longer than proxies do', async () => {
    const res = await t.http().get('/users').expect(200);
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.headers['x-frame-options']).toBe('SAMEORIGIN');
    expect(res.headers['x-powered-by']).toBeUndefined();
    expect((await keepAliveGet(t.url, '/users'))['keep-alive']).toBe('timeout=65');
    expect(t.app.getHttpServer().headersTimeout).toBeGreaterThan(65_000);
  });

  it('asks keep-alive clients to reconnect once shutdown has begun', async () => {
    expect((await keepAliveGet(t.url, '/health')).connection).toBe('keep-alive');
    t.app.get(HealthService).beginShutdown();
    expect((await keepAliveGet(t.url, '/health')).connection).toBe('close');
  });
});
