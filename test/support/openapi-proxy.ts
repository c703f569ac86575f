// Prism's validation proxy (@stoplight/prism-cli) in front of a test app, checking every exchange
// of the e2e suites against the committed openapi.json. On with TEST_OPENAPI_PROXY=1 (see
// createTestApp): `http()` then goes through Prism, which forwards each request unchanged and
// reports what the document does not allow in an `sl-violations` response header. The header and
// Prism's CORS headers are taken off before a test sees the response.
//
// A violation fails the suite (from close()) when the document and the service disagree:
// - a response the document does not describe (any `response` violation);
// - a request the document refuses but the service accepted (a request violation, status < 400);
// - a route the document lacks that the service served (status other than 404).
// A 4xx whose request the document also refuses is the two agreeing, not a violation. Not
// counted: the documentation's own routes (Swagger UI at /docs, the document at /docs-json and
// /docs-yaml), which are not part of the API they describe, a body sent with DELETE, which
// the service ignores (it has no defined meaning, RFC 9110 section 9.3.5) and the document
// rightly leaves out, and SCIM provisioning (`/scim/v2`), whose resources and messages are
// described by SCIM's own schema at its discovery endpoints (RFC 7643), not by openapi.json.
import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import type { Response } from 'superagent';
import type request from 'supertest';
import { freePort } from '../../scripts/lib/ports.mjs';
import { staticFiles } from '../../src/http/openapi.js';
import { projectRoot } from '../../src/project-root.js';

export interface PrismViolation {
  location: string[];
  severity: 'Error' | 'Warning' | 'Information' | 'Hint';
  code?: string;
  message: string;
}

export interface Exchange {
  method: string;
  path: string;
  status: number;
  violations: PrismViolation[];
}

export interface OpenApiProxy {
  url: string;
  exchanges: Exchange[];
  /** Requests sent straight to the app because Prism cannot take them (see observedAgent). */
  direct: string[];
  /** Requests sent through Prism whose answer has not reached the test yet. */
  inFlight: Set<object>;
  /** The exchanges where the document and the service disagree (see the rules above). */
  disagreements(): Exchange[];
  close(): Promise<void>;
}

const PRISM = path.join(projectRoot(), 'node_modules', '.bin', 'prism');
const DOCUMENT = path.join(projectRoot(), 'openapi.json');
const PRISM_HEADERS = [
  'sl-violations',
  'access-control-allow-origin',
  'access-control-allow-headers',
  'access-control-allow-credentials',
  'access-control-expose-headers',
];
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Prism's check of the bearer credential. The document requires a token on every guarded
 * operation, as a deployment with authentication on does; the test apps run with it off
 * (AUTH_MODE=none, the development default), where the service asks for none. The token's own
 * rules are proven by the authentication specs, not here.
 */
export function isSecurityViolation(violation: PrismViolation): boolean {
  return violation.message === 'Invalid security scheme used';
}

/** Whether an exchange shows the document and the service disagreeing. */
export function disagrees({ method, path: url, status, violations }: Exchange): boolean {
  if (/^\/docs(?:[/?-]|$)/.test(url)) return false;
  return violations.some((violation) => {
    if (isSecurityViolation(violation)) return false;
    if (method === 'DELETE' && violation.message.includes('request included a non-empty body')) {
      return false;
    }
    if (violation.location[0] === 'response') return violation.severity === 'Error';
    if (violation.message === 'Selected route not found') return status !== 404;
    return violation.severity === 'Error' && status < 400;
  });
}

/** Starts Prism on a free loopback port in front of `upstream`; resolves once it listens. */
export async function startOpenApiProxy(upstream: string): Promise<OpenApiProxy> {
  const port = await freePort();
  const child: ChildProcess = spawn(
    PRISM,
    ['proxy', DOCUMENT, upstream, '--host', '127.0.0.1', '--port', String(port)],
    { stdio: ['ignore', 'pipe', 'pipe'], env: { PATH: process.env.PATH, HOME: process.env.HOME } },
  );
  let output = '';
  child.stdout!.on(
    'data',
    (chunk: Buffer) => (output = (output + chunk.toString()).slice(-20_000)),
  );
  child.stderr!.on(
    'data',
    (chunk: Buffer) => (output = (output + chunk.toString()).slice(-20_000)),
  );
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const deadline = Date.now() + 60_000;
  while (!output.includes('Prism is listening')) {
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`prism proxy did not start:\n${output}`);
    }
    await sleep(50);
  }
  const exchanges: Exchange[] = [];
  const inFlight = new Set<object>();
  return {
    url: `http://127.0.0.1:${port}`,
    exchanges,
    direct: [],
    inFlight,
    disagreements: () => exchanges.filter(disagrees),
    close: async () => {
      // A request still in flight (one the app answered while it shut down) gets its answer
      // through Prism before Prism stops: bounded, as Prism's own answer time is.
      const settleBy = Date.now() + 10_000;
      while (inFlight.size > 0 && Date.now() < settleBy) await sleep(20);
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      // Bounded, and the timer cleared: a pending one would keep Jest from exiting.
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([exited, new Promise((resolve) => (timer = setTimeout(resolve, 5000)))]);
      clearTimeout(timer);
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    },
  };
}

/** Records a response's violations in `exchanges` and removes what Prism added to it. */
export function recordExchange(exchanges: Exchange[], response: Response): void {
  const headers = response.headers as Record<string, string | undefined>;
  const raw = headers['sl-violations'];
  for (const name of PRISM_HEADERS) delete headers[name];
  const req = (response as unknown as { req: { method: string; path: string } }).req;
  exchanges.push({
    method: req.method,
    path: req.path,
    status: response.status,
    violations: raw ? (JSON.parse(raw) as PrismViolation[]) : [],
  });
}

/** What observedAgent reads of a supertest Test (superagent's request fields). */
interface PendingTest {
  url: string;
  _data?: unknown;
  _header?: Record<string, string>;
  end(callback?: unknown): unknown;
  on(event: 'response', listener: (response: Response) => void): unknown;
}

const STATIC_FILES = new Set(staticFiles(path.join(projectRoot(), 'public')));

/**
 * Whether Prism 5 can take the request unchanged. It never answers a JSON request whose body
 * does not parse (the client times out); its process exits on a path with a malformed
 * percent-escape (`/users/%E0%A4%A`); it re-serialises a JSON body, turning a scalar or null
 * (which /echo takes) into something else; and it re-encodes a binary response (a static file)
 * as text. Those requests go straight to the app, as do SCIM's (not the document's to describe);
 * openapi-strictness.e2e-spec.ts checks a static file's status and headers through Prism.
 */
/** SCIM provisioning's routes: described by SCIM's discovery endpoints, not by openapi.json. */
const SCIM_BASE = '/scim/v2';

function prismCanTake(test: PendingTest): boolean {
  let pathname: string;
  try {
    pathname = decodeURIComponent(new URL(test.url).pathname);
  } catch {
    return false;
  }
  if (STATIC_FILES.has(pathname) || pathname.startsWith(SCIM_BASE)) return false;
  const type = test._header?.['content-type'] ?? '';
  const data = test._data;
  // superagent keeps an object body as is (it serialises it as JSON) and a string as sent.
  if (data === null) return false;
  if (typeof data === 'string' && /json/i.test(type)) {
    try {
      const parsed: unknown = JSON.parse(data);
      return typeof parsed === 'object' && parsed !== null;
    } catch {
      return false;
    }
  }
  return true;
}

/**
 * An agent for `proxyUrl` whose every request reports its response to `proxy.exchanges` before
 * any assertion runs (superagent emits `response` before it calls back). A request Prism cannot
 * take is sent to `directUrl` instead and counted in `proxy.direct`. A request sent through Prism
 * is in `proxy.inFlight` until its answer reaches the test.
 */
export function observedAgent(
  agent: ReturnType<typeof request>,
  proxy: Pick<OpenApiProxy, 'url' | 'exchanges' | 'direct' | 'inFlight'>,
  directUrl: string,
): ReturnType<typeof request> {
  return new Proxy(agent, {
    get(target, property, receiver) {
      const value: unknown = Reflect.get(target, property, receiver);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        const test = (value as (...a: unknown[]) => unknown).apply(target, args) as PendingTest;
        if (typeof test?.on !== 'function' || typeof test.end !== 'function') return test;
        const end = test.end.bind(test);
        let routed = true;
        test.end = (callback?: unknown) => {
          if (!prismCanTake(test)) {
            routed = false;
            proxy.direct.push(test.url);
            test.url = directUrl + test.url.slice(proxy.url.length);
            return end(callback);
          }
          if (typeof callback !== 'function') return end(callback);
          proxy.inFlight.add(test);
          return end((...answer: unknown[]) => {
            proxy.inFlight.delete(test);
            return (callback as (...a: unknown[]) => unknown)(...answer);
          });
        };
        test.on('response', (response) => {
          if (routed) recordExchange(proxy.exchanges, response);
        });
        return test;
      };
    },
  });
}

/** One line per disagreement, for a failure message. */
export function describeDisagreements(exchanges: Exchange[]): string {
  return exchanges
    .map(
      ({ method, path: url, status, violations }) =>
        `${method} ${url} -> ${status}: ${violations.map((v) => `[${v.location.join('.')}] ${v.message}`).join('; ')}`,
    )
    .join('\n');
}
