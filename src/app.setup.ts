import { type INestApplication } from '@nestjs/common';
import { type GrpcOptions, Transport } from '@nestjs/microservices';
import type { NestExpressApplication } from '@nestjs/platform-express';
import * as protoLoader from '@grpc/proto-loader';
import { ReflectionService } from '@grpc/reflection';
import { protoPath as healthProtoPath } from 'grpc-health-check';
import path from 'node:path';
import type { Request } from 'express';
import { AppConfig } from './config/app-config.js';
import { isJsonBody, requestId, requireJsonBody } from './common/http-middleware.js';
import { projectRoot } from './project-root.js';
import { HealthService } from './utility/health.service.js';

export const USERS_PROTO_PATH = path.join(projectRoot(), 'proto', 'users.proto');

/** proto-loader options shared by the server and the reflection service. */
export const PROTO_LOADER_OPTIONS: protoLoader.Options = {
  keepCase: true,
  longs: Number,
  enums: String,
  defaults: true,
  oneofs: true,
};

/**
 * HTTP settings shared by main.ts and the e2e tests. The app must be created with
 * `{ bodyParser: false }`: the JSON parser is registered here, after the request id.
 */
export function configureApp(app: INestApplication, config: AppConfig): void {
  const express = app as NestExpressApplication;
  express.disable('x-powered-by');
  // JSON responses of an API are not worth hashing for a weak ETag on every request.
  express.set('etag', false);
  express.use(requestId);
  express.use(requireJsonBody);
  // strict: false lets /echo take any JSON value, scalars and null included.
  express.useBodyParser('json', {
    limit: config.bodyLimitBytes,
    strict: false,
    type: (request) => isJsonBody(request as Request),
  });
}

/**
 * The gRPC transport of the hybrid app. Health and reflection are registered on the same server.
 * Each channel option is a deliberate choice for running behind a service mesh sidecar.
 */
export function grpcOptions(
  config: AppConfig,
  health: HealthService,
  host = '0.0.0.0',
): GrpcOptions {
  return {
    transport: Transport.GRPC,
    options: {
      package: 'users',
      protoPath: USERS_PROTO_PATH,
      url: `${host}:${config.grpcPort}`,
      loader: PROTO_LOADER_OPTIONS,
      // GetUserRequest is a few bytes; nothing legitimate comes near 64 KiB.
      maxReceiveMessageLength: 64 * 1024,
      maxSendMessageLength: 4 * 1024 * 1024,
      gracefulShutdown: true,
      channelOptions: {
        // Sidecars (Envoy) ping idle connections; accept pings every 10 s even without calls
        // instead of answering GOAWAY too_many_pings (grpc-js defaults to one per 5 minutes).
        'grpc.keepalive_permit_without_calls': 1,
        'grpc.http2.min_ping_interval_without_data_ms': 10_000,
        // Our own keepalive pings detect dead peers on long-lived connections.
        'grpc.keepalive_time_ms': 60_000,
        'grpc.keepalive_timeout_ms': 20_000,
        // Close connections after 5 minutes (plus 30 s for calls in flight) so clients reconnect
        // and load spreads over new pods after a scale-out.
        'grpc.max_connection_age_ms': 5 * 60_000,
        'grpc.max_connection_age_grace_ms': 30_000,
      },
      onLoadPackageDefinition: (definition, server) => {
        health.grpcHealth.addToServer(server);
        // Reflection describes both our service and grpc.health.v1, so grpcurl needs no proto files.
        const healthDefinition = protoLoader.loadSync(healthProtoPath, PROTO_LOADER_OPTIONS);
        new ReflectionService({ ...definition, ...healthDefinition }).addToServer(server);
      },
    },
  };
}
