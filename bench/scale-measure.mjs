// Measurements of the scale mode (bench/scale.mjs): the service they run against, sequential
// requests, a cursor at a depth, and a walk by cursor.
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { Samples } from '../scripts/lib/measure.mjs';
import { startTarget } from './targets.mjs';

const ROOT = path.resolve(import.meta.dirname, '..');

/**
 * The service the scale mode measures (startTarget), at LOG_LEVEL=warn: no log line per request,
 * so that a request's latency at concurrency 1 is the service's own.
 */
export function startScaleService(url, { options, node, cleanups, log }) {
  return startTarget('service', {
    url,
    extraEnv: { LOG_LEVEL: 'warn' },
    pin: options.pin,
    node,
    cleanups,
    log,
  });
}

/** `count` requests one at a time (latency without queueing), bounded by `maxMs`. */
export async function sequential(base, pathOf, count, maxMs = 30_000) {
  const samples = new Samples(count);
  let errors = 0;
  const end = performance.now() + maxMs;
  for (let i = 0; i < count + 3 && performance.now() < end; i++) {
    const sent = performance.now();
    const response = await fetch(base + pathOf(i));
    await response.arrayBuffer();
    if (response.status !== 200) errors++;
    // The first three warm the connection and the plan cache.
    else if (i >= 3) samples.add(performance.now() - sent);
  }
  const [p50Ms, p99Ms] = samples.percentiles(50, 99);
  return { n: samples.length, errors, p50Ms, p99Ms };
}

/**
 * The token of the row at `depth` in a list's order, as the service would have issued it after
 * `depth` rows: found with one (slow, once) OFFSET query, encoded by the service's own code.
 */
export async function cursorAt(client, list, depth) {
  const { encodeCursor } = await import(
    pathToFileURL(path.join(ROOT, 'dist', 'src', 'common', 'list-cursor.js')).href
  );
  const where = list.role ? 'WHERE role = $1' : '';
  const order = list.sort.length ? 'created_at DESC, id ASC' : 'id ASC';
  const { rows } = await client.query(
    `SELECT to_json(created_at) #>> '{}' AS created_at, id FROM users ${where}
     ORDER BY ${order} OFFSET ${depth - 1} LIMIT 1`,
    list.role ? [list.role] : [],
  );
  const last = rows[0];
  const values = list.sort.length ? [new Date(last.created_at).toISOString(), last.id] : [last.id];
  const binding = `${list.scope} sort=${list.sort.map((k) => `${k.direction} ${k.field}`).join(',')}`;
  return encodeCursor(binding, values);
}

/** Walks `/users?limit=100` by cursor until `maxRows` rows (or the end), bounded by `maxMs`. */
export async function walk(base, maxRows, { maxMs }) {
  const started = performance.now();
  let next = '/users?limit=100&cursor=';
  let rows = 0;
  let pages = 0;
  while (next && rows < maxRows && performance.now() - started < maxMs) {
    const response = await fetch(base + next);
    const body = await response.json();
    if (response.status !== 200)
      throw new Error(`walk: ${response.status} ${JSON.stringify(body)}`);
    rows += body.length;
    pages++;
    next = /<([^>]+)>; rel="next"/.exec(response.headers.get('link') ?? '')?.[1];
  }
  return { rows, pages, seconds: (performance.now() - started) / 1000 };
}
