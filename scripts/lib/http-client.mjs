// One HTTP client for the tooling. `send` puts on the wire exactly the method, path, headers and
// body it is given (fetch and supertest normalise paths and headers, which the fuzz and security
// tests must not have); `requestJson` is the JSON call the load loops make, and never rejects.
import http from 'node:http';

/** @import { Agent, IncomingHttpHeaders } from 'node:http' */

/**
 * @typedef {object} SendOptions
 * @property {string} [method]
 * @property {string} [path]
 * @property {Record<string, string | string[]>} [headers] A list sends the header once per value
 *   (two Authorization headers, for instance).
 * @property {string | Buffer | (string | Buffer)[]} [body] An array is written piece by piece
 *   (one chunk each when `chunked`).
 * @property {boolean} [chunked] Send the body with Transfer-Encoding: chunked instead of a
 *   Content-Length.
 * @property {Agent | false} [agent]
 * @property {number} [timeoutMs]
 */

/**
 * @typedef {object} Reply
 * @property {number} status
 * @property {IncomingHttpHeaders} headers
 * @property {string} text
 * @property {Buffer} bytes
 */

/**
 * @typedef {object} JsonResult
 * @property {number | string} status HTTP status, or the client-side failure: `timeout`,
 *   `ECONNRESET`, …
 * @property {unknown} [body]
 */

/**
 * Sends one request to `base` (`http://127.0.0.1:port`) and resolves with the status, headers and
 * body, as text and as bytes. The body goes as given, with a Content-Length unless `chunked`; an
 * array body is written piece by piece (with `chunked`, one chunk each: a streamed upload).
 * Rejects on a connection error, or after `timeoutMs` of inactivity with an error whose code is
 * `timeout`. `agent: false` (the default) sends on a connection of its own.
 * @param {string} base
 * @param {SendOptions} options
 * @returns {Promise<Reply>}
 */
export function send(
  base,
  { method = 'GET', path = '/', headers = {}, body, chunked = false, agent = false, timeoutMs },
) {
  const { hostname, port } = new URL(base);
  const pieces = body === undefined ? [] : [body].flat();
  /** @type {Record<string, string | string[]>} */
  const all = { ...headers };
  if (body !== undefined && !chunked) {
    all['content-length'] = String(
      pieces.reduce((sum, piece) => sum + Buffer.byteLength(piece), 0),
    );
  }
  return new Promise((resolve, reject) => {
    const request = http.request(
      { host: hostname, port, method, path, headers: all, agent, timeout: timeoutMs },
      (response) => {
        /** @type {Buffer[]} */
        const chunks = [];
        response.on('data', (chunk) => chunks.push(chunk));
        response.on('end', () => {
          const bytes = Buffer.concat(chunks);
          resolve({
            status: response.statusCode ?? 0,
            headers: response.headers,
            text: bytes.toString('utf8'),
            bytes,
          });
        });
        response.on('error', reject);
      },
    );
    request.on('timeout', () =>
      request.destroy(Object.assign(new Error('timeout'), { code: 'timeout' })),
    );
    request.on('error', reject);
    for (const piece of pieces) request.write(piece);
    request.end();
  });
}

/**
 * A JSON request (`body`, when given, is serialised) that resolves with `{ status, body }`: the
 * parsed body (the text when it is not JSON, undefined when empty). On a client-side failure it
 * resolves with `{ status }` naming it (`timeout`, `ECONNRESET`, …), so that a load loop can
 * count failures as outcomes.
 * @param {string} base
 * @param {string} method
 * @param {string} path
 * @param {unknown} [body]
 * @param {{ agent?: Agent | false; timeoutMs?: number; headers?: Record<string, string> }} [options]
 * @returns {Promise<JsonResult>}
 */
export async function requestJson(
  base,
  method,
  path,
  body,
  { agent = false, timeoutMs, headers = {} } = {},
) {
  const payload = body === undefined ? undefined : JSON.stringify(body);
  try {
    const reply = await send(base, {
      method,
      path,
      headers: payload === undefined ? headers : { 'content-type': 'application/json', ...headers },
      body: payload,
      agent,
      timeoutMs,
    });
    let parsed = reply.text;
    try {
      parsed = reply.text ? JSON.parse(reply.text) : undefined;
    } catch {
      // not JSON: kept as text, for the caller to show
    }
    return { status: reply.status, body: parsed };
  } catch (error) {
    return { status: /** @type {NodeJS.ErrnoException} */ (error).code ?? String(error) };
  }
}
