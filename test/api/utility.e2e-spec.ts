import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { projectRoot } from '../../src/project-root.js';
import { HealthService } from '../../src/health/health.service.js';
import { INVALID_API_KEY, INVALID_JSON, NOT_JSON } from '../support/expected-errors.js';
import { createTestApp, TEST_API_KEYS, type TestApp } from '../support/test-app.js';

/** GET with the path sent exactly as written (supertest would normalise `..` away). */
function rawGet(
  url: string,
  rawPath: string,
): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const req = http.request({ host: hostname, port, path: rawPath, method: 'GET' }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('Utility routes (e2e)', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  describe('GET /health and /health/ready', () => {
    it('answers liveness without a database round-trip', async () => {
      expect((await t.http().get('/health').expect(200)).body).toEqual({ ok: true });
    });

    it('is ready while the database answers', async () => {
      expect((await t.http().get('/health/ready').expect(200)).body).toEqual({
        ok: true,
        database: 'up',
        shuttingDown: false,
      });
    });

    it('answers both on the metrics port too, where the kubelet probes, and nothing else there', async () => {
      const live = await fetch(t.metricsPortUrl('/health'));
      expect({ status: live.status, body: await live.json() }).toEqual({
        status: 200,
        body: { ok: true },
      });
      const ready = await fetch(t.metricsPortUrl('/health/ready'));
      expect(ready.headers.get('content-type')).toBe('application/json; charset=utf-8');
      expect({ status: ready.status, body: await ready.json() }).toEqual({
        status: 200,
        body: { ok: true, database: 'up', shuttingDown: false },
      });
      expect((await fetch(t.metricsPortUrl('/health'), { method: 'POST' })).status).toBe(404);
      expect((await fetch(t.metricsPortUrl('/health/other'))).status).toBe(404);
    });
  });

  describe('POST /echo', () => {
    it.each([[{ a: [1, { b: null }] }], [[1, 'two', false]], ['a string'], [42], [true], [null]])(
      'returns %j as youSent',
      async (value) => {
        const res = await t
          .http()
          .post('/echo')
          .set('content-type', 'application/json')
          .send(JSON.stringify(value))
          .expect(200);
        expect(res.body).toEqual({ youSent: value });
      },
    );

    it('rejects malformed JSON, a missing body and a non-JSON content type', async () => {
      const malformed = await t
        .http()
        .post('/echo')
        .set('content-type', 'application/json')
        .send('{"a":')
        .expect(400);
      expect(malformed.body).toEqual(INVALID_JSON);
      expect((await t.http().post('/echo').expect(400)).body).toEqual({
        error: 'request body must be a JSON value',
      });
      expect(
        (await t.http().post('/echo').set('content-type', 'text/plain').send('hi').expect(415))
          .body,
      ).toEqual(NOT_JSON);
    });
  });

  describe('GET /info', () => {
    it('returns method, path without the query string, and redacted headers', async () => {
      const res = await t
        .http()
        .get('/info?token=abc')
        .set('authorization', 'Bearer secret')
        .set('cookie', 'session=secret')
        .set('x-api-key', TEST_API_KEYS[0])
        .set('x-custom', 'visible')
        .expect(200);
      expect(res.body).toEqual({
        method: 'GET',
        path: '/info',
        headers: expect.objectContaining({
          authorization: '[redacted]',
          cookie: '[redacted]',
          'x-api-key': '[redacted]',
          'x-custom': 'visible',
        }),
      });
      expect(JSON.stringify(res.body)).not.toContain('secret');
      expect(JSON.stringify(res.body)).not.toContain(TEST_API_KEYS[0]);
    });

    it('redacts the credentials a mesh and common gateways add', async () => {
      const credentials = {
        'x-forwarded-client-cert': 'By=spiffe://cluster/ns/a;Hash=abc;Cert="-----BEGIN"',
        'x-auth-token': 'gateway-token',
        'x-amzn-oidc-data': 'eyJ.oidc',
        'x-goog-iap-jwt-assertion': 'eyJ.iap',
        'x-csrf-token': 'csrf',
        'x-vault-secret': 'vault',
        'proxy-authorization': 'Basic abc',
      };
      const res = await t.http().get('/info').set(credentials).set('x-request-id', 'r-1');
      for (const name of Object.keys(credentials)) {
        expect(res.body.headers[name]).toBe('[redacted]');
      }
      expect(res.body.headers['x-request-id']).toBe('r-1');
    });
  });

  describe('GET /private', () => {
    it('answers 401 without a key', async () => {
      expect((await t.http().get('/private').expect(401)).body).toEqual(INVALID_API_KEY);
    });

    it('answers 401 for a wrong key, also one of the right length', async () => {
      const sameLength = TEST_API_KEYS[0].slice(0, -1) + 'X';
      for (const key of ['wrong', sameLength, TEST_API_KEYS[0].toUpperCase()]) {
        expect((await t.http().get('/private').set('x-api-key', key).expect(401)).body).toEqual(
          INVALID_API_KEY,
        );
      }
    });

    it('accepts both keys of a rotation', async () => {
      for (const key of TEST_API_KEYS) {
        const res = await t.http().get('/private').set('x-api-key', key).expect(200);
        expect(res.body).toEqual({ secretData: expect.any(Number) });
      }
    });

    it('answers 401 to everyone when no key is configured', async () => {
      const keyless = await createTestApp({ env: { API_KEYS: '' } });
      try {
        for (const key of [...TEST_API_KEYS, '']) {
          await keyless.http().get('/private').set('x-api-key', key).expect(401, INVALID_API_KEY);
        }
      } finally {
        await keyless.close();
      }
    });
  });

  describe('static files', () => {
    const logo = readFileSync(path.join(projectRoot(), 'public', 'logo.png'));

    it('serves the logo as image/png with ETag and Cache-Control', async () => {
      const res = await t.http().get('/logo.png').expect(200);
      expect(res.headers['content-type']).toBe('image/png');
      expect(res.headers.etag).toEqual(expect.any(String));
      expect(res.headers['cache-control']).toBe('public, max-age=3600');
      expect(Buffer.compare(res.body as Buffer, logo)).toBe(0);
      // A real PNG: the signature and a non-trivial size.
      expect(logo.subarray(0, 8)).toEqual(
        Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
      );
      await t.http().get('/logo.png').set('if-none-match', res.headers.etag).expect(304);
    });

    it('answers an unknown file with the JSON 404', async () => {
      const res = await t.http().get('/missing.png').expect(404);
      expect(res.body).toEqual({ error: 'no route for GET /missing.png' });
    });

    it.each([
      '/../package.json',
      '/%2e%2e/package.json',
      '/..%2fpackage.json',
      '/%2e%2e%2fpackage.json',
      '/public/../package.json',
      '/logo.png/../../package.json',
      '/',
      '/.',
      '/%2e',
      '/..',
    ])('serves nothing outside public/ or for a directory: %s', async (rawPath) => {
      const res = await rawGet(t.url, rawPath);
      expect(res.status).toBe(404);
      expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(JSON.parse(res.body)).toEqual({ error: expect.any(String) });
      expect(res.body).not.toContain('"name": "users-service"');
    });

    it('never serves dot-files', async () => {
      const secret = path.join(projectRoot(), 'public', '.secret-test-file');
      writeFileSync(secret, 'do not serve');
      try {
        for (const rawPath of ['/.secret-test-file', '/%2esecret-test-file']) {
          const res = await rawGet(t.url, rawPath);
          expect(res.status).toBe(404);
          expect(res.body).not.toContain('do not serve');
        }
      } finally {
        rmSync(secret);
      }
    });
  });
});

describe('readiness during shutdown (e2e)', () => {
  it('turns 503 from the moment shutdown begins while liveness stays 200', async () => {
    const t = await createTestApp();
    try {
      t.app.get(HealthService).beginShutdown();
      expect((await t.http().get('/health/ready').expect(503)).body).toEqual({
        ok: false,
        database: 'down',
        shuttingDown: true,
      });
      await t.http().get('/health').expect(200);
      // The same on the metrics port, the kubelet's.
      const ready = await fetch(t.metricsPortUrl('/health/ready'));
      expect({ status: ready.status, body: await ready.json() }).toEqual({
        status: 503,
        body: { ok: false, database: 'down', shuttingDown: true },
      });
      expect((await fetch(t.metricsPortUrl('/health'))).status).toBe(200);
    } finally {
      await t.close();
    }
  });
});
