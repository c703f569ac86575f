// Limits and headers: the request body limit (413, before the body is read) and the gRPC receive
// limit (RESOURCE_EXHAUSTED) are enforced, and every response carries the security headers.
import * as grpc from '@grpc/grpc-js';
import { getUserRaw } from '../../scripts/lib/grpc-client.mjs';
import { send } from '../../scripts/lib/http-client.mjs';
import { call, expectNothingInternal, getUserRequest } from '../support/raw-calls.js';
import { createTestApp, resetDatabase, type TestApp } from '../support/test-app.js';

/** Field 15, length-delimited: an unknown field the decoder skips, to pad a message to `size`. */
function padded(message: Buffer, size: number): Buffer {
  const header = (length: number) => {
    const bytes = [0x7a];
    let n = length;
    while (n >= 0x80) {
      bytes.push((n & 0x7f) | 0x80);
      n >>>= 7;
    }
    bytes.push(n);
    return Buffer.from(bytes);
  };
  // The varint length of the padding depends on the padding's own length: settle it in two steps.
  let payload = size - message.length - header(size).length;
  payload = size - message.length - header(payload).length;
  const result = Buffer.concat([message, header(payload), Buffer.alloc(payload, 0x61)]);
  expect(result.length).toBe(size);
  return result;
}

describe('limits and headers (e2e)', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp({ grpc: true, env: { BODY_LIMIT: '1kb' } });
  });
  afterAll(async () => {
    await resetDatabase(t.dataSource);
    await t.close();
  });

  const body = (size: number) => `{"name":"${'n'.repeat(size - 11)}"}`;

  it('refuses a body over BODY_LIMIT with 413, at the limit it is validated as usual', async () => {
    const at = await call(
      t.url,
      'POST',
      '/echo',
      { 'content-type': 'application/json' },
      body(1024),
    );
    expect(at.status).toBe(200);
    const over = await call(
      t.url,
      'POST',
      '/echo',
      { 'content-type': 'application/json' },
      body(1025),
    );
    expect([over.status, JSON.parse(over.text)]).toEqual([
      413,
      { error: 'request body is larger than the limit of 1024 bytes' },
    ]);
  });

  it('refuses a large streamed body with 413 without keeping it (chunked, no Content-Length)', async () => {
    // 20 MB in 64 KiB chunks: counted as it arrives, discarded once past the limit.
    const reply = await send(t.url, {
      method: 'POST',
      path: '/users',
      headers: { 'content-type': 'application/json' },
      chunked: true,
      body: [
        '{"name":"',
        ...Array.from({ length: 320 }, () => Buffer.alloc(64 * 1024, 0x61)),
        '"}',
      ],
    });
    expect([reply.status, JSON.parse(reply.text)]).toEqual([
      413,
      { error: 'request body is larger than the limit of 1024 bytes' },
    ]);
    expect((await t.http().get('/users').expect(200)).body).toEqual([]);
  });

  it('refuses a gRPC message over 64 KiB with RESOURCE_EXHAUSTED and keeps serving', async () => {
    const created = await t.http().post('/users').send({ name: 'Grace' }).expect(201);
    const id = created.body.id as number;
    // The unknown field is skipped by the decoder: at exactly 64 KiB the call is served.
    expect(await getUserRaw(t.grpcAddress, padded(getUserRequest(id), 64 * 1024))).toEqual({
      code: grpc.status.OK,
      reply: expect.any(Buffer),
    });
    const over = await getUserRaw(t.grpcAddress, padded(getUserRequest(id), 64 * 1024 + 1));
    expect(over.code).toBe(grpc.status.RESOURCE_EXHAUSTED);
    expectNothingInternal(over.details ?? '');
    const huge = await getUserRaw(t.grpcAddress, padded(getUserRequest(id), 8 * 1024 * 1024));
    expect(huge.code).toBe(grpc.status.RESOURCE_EXHAUSTED);
    expect(await getUserRaw(t.grpcAddress, getUserRequest(id))).toEqual({
      code: grpc.status.OK,
      reply: expect.any(Buffer),
    });
  });

  it('sends security headers and no framework banner, on successes and errors alike', async () => {
    for (const [method, target] of [
      ['GET', '/health'],
      ['GET', '/users/abc'],
      ['GET', '/nope'],
      ['GET', '/private'],
      ['GET', '/logo.png'],
    ]) {
      const reply = await call(t.url, method, target);
      expect(reply.headers['x-powered-by']).toBeUndefined();
      expect(reply.headers['x-content-type-options']).toBe('nosniff');
      expect(reply.headers['x-frame-options']).toBeDefined();
      expect(reply.headers['strict-transport-security']).toBeDefined();
    }
  });
});
