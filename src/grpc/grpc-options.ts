import type { INestApplication } from '@nestjs/common';
import type { CustomStrategy, GrpcOptions } from '@nestjs/microservices';
import type { Server as GrpcServer } from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { ReflectionService } from '@grpc/reflection';
import { protoPath as healthProtoPath } from 'grpc-health-check';
import path from 'node:path';
import { AppConfig } from '../config/app-config.js';
import { AppGrpcServer } from './app-grpc-server.js';
import { DirectGrpcMethods } from './direct-grpc-methods.js';
import { GracefulShutdown } from '../health/graceful-shutdown.js';
import { HealthService } from '../health/health.service.js';
import { projectRoot } from '../project-root.js';
import { AdmissionController } from '../overload/admission.js';
import { GrpcObservability } from './grpc-observability.js';
import { OverloadMetrics } from '../overload/overload.metrics.js';

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
 * The gRPC transport of the hybrid app, on the same HOST as HTTP. Health and reflection are
 * registered on the same server, which GracefulShutdown force-closes when calls outlive the
 * shutdown timeout. Each channel option is a deliberate choice for running behind a mesh sidecar.
 * Nest's gRPC server, answering unary calls without RxJS and direct methods without Nest's
 * per-call dispatch (AppGrpcServer).
 */
export function grpcOptions(app: INestApplication): CustomStrategy {
  const config = app.get(AppConfig);
  const health = app.get(HealthService);
  const shutdown = app.get(GracefulShutdown);
  const options: GrpcOptions['options'] = {
    package: 'users',
    protoPath: USERS_PROTO_PATH,
    url: `${config.host}:${config.grpcPort}`,
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
      // At most 100 calls at once per connection (HTTP/2's recommended minimum): a client with
      // more waits on its side, at no cost here, and a mesh proxy opens another connection
      // (docs/overload.md).
      'grpc.max_concurrent_streams': 100,
    },
    onLoadPackageDefinition: (definition: protoLoader.PackageDefinition, server: GrpcServer) => {
      health.grpcHealth.addToServer(server);
      // Reflection describes both our service and grpc.health.v1, so grpcurl needs no proto files.
      const healthDefinition = protoLoader.loadSync(healthProtoPath, PROTO_LOADER_OPTIONS);
      new ReflectionService({ ...definition, ...healthDefinition }).addToServer(server);
      shutdown.attachGrpcServer(server);
    },
  };
  return {
    strategy: new AppGrpcServer(options, app.get(DirectGrpcMethods), {
      controller: app.get(AdmissionController),
      metrics: app.get(OverloadMetrics),
      retryAfterS: config.overload.retryAfterS,
      maxHeld: config.overload.maxConnections,
      observability: app.get(GrpcObservability),
    }),
  };
}
