// A stand-in OpenTelemetry Collector for the tests and the benchmark: a node:http server on a
// free loopback port accepting OTLP/HTTP POST /v1/traces. JSON requests (OTEL_EXPORTER_OTLP_PROTOCOL
// =http/json) are decoded into flat spans to assert on; protobuf requests are only counted, so the
// benchmark can use it as a sink that costs the service what a real collector would.
import { createServer } from 'node:http';
import { gunzipSync } from 'node:zlib';
import { flatten, spanReceiver } from './otlp-spans.mjs';

/**
 * @import { ReceivedSpan, SpanReceiver } from './otlp-spans.mjs'
 * @typedef {SpanReceiver<{ requests: number; bytes: number }>} OtlpReceiver
 */

/**
 * Starts the receiver on 127.0.0.1 and a free port. `endpoint` is what OTEL_EXPORTER_OTLP_ENDPOINT
 * takes; `requests` counts every POST (any protocol); `spans` holds the decoded JSON spans.
 * @returns {Promise<OtlpReceiver>}
 */
export async function startOtlpReceiver() {
  /** @type {ReceivedSpan[]} */
  const spans = [];
  const stats = { requests: 0, bytes: 0 };
  const server = createServer((request, response) => {
    /** @type {Buffer[]} */
    const chunks = [];
    request.on('data', (chunk) => chunks.push(chunk));
    request.on('end', () => {
      stats.requests += 1;
      let body = Buffer.concat(chunks);
      stats.bytes += body.length;
      if (request.method !== 'POST' || request.url !== '/v1/traces') {
        response.writeHead(404).end();
        return;
      }
      try {
        if (request.headers['content-encoding'] === 'gzip') body = gunzipSync(body);
        if ((request.headers['content-type'] ?? '').startsWith('application/json')) {
          spans.push(...flatten(JSON.parse(body.toString('utf8'))));
        }
      } catch {
        response.writeHead(400).end();
        return;
      }
      response.writeHead(200, {
        'content-type': request.headers['content-type'] ?? 'application/json',
      });
      response.end(request.headers['content-type']?.startsWith('application/json') ? '{}' : '');
    });
  });
  await /** @type {Promise<void>} */ (
    new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
  );
  const { port } = /** @type {import('node:net').AddressInfo} */ (server.address());
  /** @type {() => Promise<void>} */
  const close = () =>
    new Promise((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return spanReceiver(port, spans, stats, close);
}
