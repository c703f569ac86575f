import { type INestApplication } from '@nestjs/common';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { Logger } from 'nestjs-pino';
import { json, type Request } from 'express';
import { AppConfig } from './config/app-config.js';
import { isJsonBody, requestPipeline } from './http/request-pipeline.js';
import { securityHeaders } from './http/security-headers.js';
import { httpObservability, shedRequestRecorder } from './observability/http-observability.js';
import { ROOT_LOGGER } from './observability/logging.js';
import { MetricsService } from './observability/metrics.service.js';
import { setupOpenApi } from './http/openapi.js';
import { HealthService } from './health/health.service.js';
import { AdmissionController } from './overload/admission.js';
import { admitHttpRequests } from './overload/http-admission.js';
import { boundIdleConnections } from './overload/connection-bound.js';
import { OverloadMetrics } from './overload/overload.metrics.js';

/**
 * Idle keep-alive connections stay open longer than a proxy's idle timeout (Envoy, cloud load
 * balancers: 60 s), so the proxy always closes first and never reuses a connection the service is
 * closing at that moment (the cause of sporadic 502s). Headers must arrive within this too.
 */
const KEEP_ALIVE_TIMEOUT_MS = 65_000;

/**
 * HTTP settings shared by main.ts and the e2e tests. The app must be created with
 * `{ bodyParser: false }`: the JSON parser runs inside the request pipeline, after the request
 * id, the request log and the content-type check.
 */
export function configureApp(app: INestApplication): void {
  const config = app.get(AppConfig);
  const express = app as NestExpressApplication;
  express.useLogger(app.get(Logger));
  express.disable('x-powered-by');
  // JSON responses of an API are not worth hashing for a weak ETag on every request.
  express.set('etag', false);
  const health = app.get(HealthService);
  const headers = securityHeaders();
  express.use(
    requestPipeline({
      observe: httpObservability(
        app.get(ROOT_LOGGER),
        app.get(MetricsService),
        () => health.isShuttingDown,
      ),
      headers,
      draining: () => health.isShuttingDown,
      // strict: false lets /echo take any JSON value, scalars and null included.
      parseJson: json({
        limit: config.bodyLimitBytes,
        strict: false,
        type: (request) => isJsonBody(request as Request),
      }),
    }),
  );
  setupOpenApi(app);
  const server = express.getHttpServer();
  server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
  server.headersTimeout = KEEP_ALIVE_TIMEOUT_MS + 1000;
  const overloadMetrics = app.get(OverloadMetrics);
  admitHttpRequests(server, app.get(AdmissionController), overloadMetrics, {
    retryAfterS: config.overload.retryAfterS,
    // As many as the connections the service keeps: a held answer holds one.
    maxHeld: config.overload.maxConnections,
    headers,
    record: shedRequestRecorder(app.get(MetricsService)),
  });
  overloadMetrics.readClosedConnectionsFrom(
    boundIdleConnections(server, config.overload.maxConnections),
  );
}
