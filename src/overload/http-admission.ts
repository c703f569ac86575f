import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { requestIdFrom } from '../common/request-id.js';
import type { Header } from '../http/security-headers.js';
import { CLIENT_CLOSED_REQUEST } from '../observability/http-observability.js';
import type { AdmissionController, AdmissionRequest } from './admission.js';
import { LateRejections } from './late-rejections.js';
import type { OverloadMetrics } from './overload.metrics.js';
import { httpWorkClass, type RejectReason, type WorkClass } from './work-class.js';

type RequestListener = (request: IncomingMessage, response: ServerResponse) => void;

/** The deadline a mesh proxy sends with a request: Envoy's remaining route timeout, in ms. */
const ENVOY_TIMEOUT = 'x-envoy-expected-rq-timeout-ms';

/** What a rejection answers, computed once: its body and the headers every answer carries. */
export interface Rejection {
  retryAfterS: number;
  /** The most rejections held for callers that came straight back (LateRejections). */
  maxHeld: number;
  headers: readonly Header[];
  /**
   * Records a turned-away request in the HTTP request metrics, as its caller saw it: `status`
   * 503, or 499 when its caller had left; `path` without its query.
   */
  record: (method: string, path: string, status: number, seconds: number) => void;
}

/**
 * Puts admission in front of the app on `server`: every request passes it before Express sees
 * it, so a rejected one costs no routing, body read, authentication, validation or database
 * connection, only its 503 (late to a connection that asks again at once: LateRejections).
 * Probes (`/health`, `/health/ready`) pass straight through. A request whose caller closed its
 * connection before it was read is counted as `client_gone` and never started.
 */
export function admitHttpRequests(
  server: Server,
  admission: AdmissionController,
  metrics: OverloadMetrics,
  rejection: Rejection,
): void {
  const app = server.listeners('request') as RequestListener[];
  if (app.length !== 1) throw new Error(`expected one request listener, found ${app.length}`);
  const [serve] = app;
  const body = Buffer.from(
    JSON.stringify({
      error: `the service is over its capacity: retry after ${rejection.retryAfterS} s`,
    }),
  );
  const headers: readonly Header[] = [
    ...rejection.headers,
    ['content-type', 'application/json; charset=utf-8'],
    ['content-length', String(body.length)],
    ['retry-after', String(rejection.retryAfterS)],
  ];
  const late = new LateRejections(rejection.retryAfterS * 1000, rejection.maxHeld);
  const reject = (offered: HttpAdmission, reason: RejectReason) => {
    const { request, response } = offered;
    metrics.rejected('http', offered.workClass, reason);
    if (reason === 'client_gone') return offered.record(rejection.record, CLIENT_CLOSED_REQUEST);
    late.answer(request.socket, () => {
      if (response.destroyed) return offered.record(rejection.record, CLIENT_CLOSED_REQUEST);
      response.setHeader('x-request-id', requestIdFrom(request.headers['x-request-id']));
      for (const [name, value] of headers) response.setHeader(name, value);
      response.statusCode = 503;
      response.end(body);
      offered.record(rejection.record, 503);
    });
  };
  // Connections whose first request has been offered. A first request may have waited in the
  // kernel's accept queue (a spike of new connections) long enough for its caller to give up
  // and close. The close is read on the loop's next turn (the read that returned the request
  // ends first), so a first request is offered only then: a caller who left is not served.
  const readOn = new WeakSet<object>();
  server.removeAllListeners('request');
  server.on('request', (request: IncomingMessage, response: ServerResponse) => {
    const url = request.url ?? '/';
    const query = url.indexOf('?');
    const path = query < 0 ? url : url.slice(0, query);
    const workClass = httpWorkClass(request.method ?? 'GET', path);
    if (workClass === undefined) return serve(request, response);
    const offered = new HttpAdmission(request, response, path, workClass, serve, reject);
    if (readOn.has(request.socket)) return admission.offer(offered);
    readOn.add(request.socket);
    setImmediate(() => setImmediate(() => admission.offer(offered)));
  });
}

/** One HTTP request at admission: its class, its deadline, and how it is served or refused. */
class HttpAdmission implements AdmissionRequest {
  readonly deadline: number;
  private readonly started = process.hrtime.bigint();
  private closed = false;
  private done?: () => void;

  constructor(
    readonly request: IncomingMessage,
    readonly response: ServerResponse,
    /** The request target without its query. */
    private readonly path: string,
    readonly workClass: WorkClass,
    private readonly serve: RequestListener,
    private readonly refuse: (offered: HttpAdmission, reason: RejectReason) => void,
  ) {
    const timeout = request.headers[ENVOY_TIMEOUT];
    const ms = typeof timeout === 'string' ? Number(timeout) : NaN;
    this.deadline = Number.isFinite(ms) && ms > 0 ? performance.now() + ms : Infinity;
    // 'close' follows the answer, or a connection that went away before it.
    response.once('close', () => {
      this.closed = true;
      this.done?.();
    });
  }

  gone(): boolean {
    return this.closed || this.request.socket.destroyed;
  }

  admit(done: () => void): void {
    if (this.gone()) {
      // Its caller left while it waited: nothing is started, and the slot is free at once.
      done();
      this.refuse(this, 'client_gone');
      return;
    }
    this.done = done;
    this.serve(this.request, this.response);
  }

  reject(reason: RejectReason): void {
    this.refuse(this, reason);
  }

  /** Hands `record` what it records of this request, turned away with `status`. */
  record(record: Rejection['record'], status: number): void {
    const seconds = Number(process.hrtime.bigint() - this.started) / 1e9;
    record(this.request.method ?? 'GET', this.path, status, seconds);
  }
}
