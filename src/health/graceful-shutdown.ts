import {
  type BeforeApplicationShutdown,
  Inject,
  Injectable,
  Logger,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { Logger as PinoLogger } from 'pino';
import type { Server as GrpcServer } from '@grpc/grpc-js';
import type { Server as HttpServer } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { AppConfig } from '../config/app-config.js';
import { ROOT_LOGGER } from '../observability/logging.js';
import { HealthService } from './health.service.js';

/**
 * The shutdown sequence, run by Nest's lifecycle (main.ts enables the signal hooks):
 * 1. readiness fails at once (HTTP 503, gRPC NOT_SERVING) and the service keeps serving for
 *    SHUTDOWN_DRAIN_MS, so the load balancer or mesh stops routing here; at its end, the
 *    long-lived calls (long polls, watch streams) are told to end (onDrained);
 * 2. Nest then stops accepting and waits for in-flight HTTP requests and gRPC calls, for at most
 *    SHUTDOWN_TIMEOUT_MS, after which the remaining connections are closed;
 * 3. the other shutdown hooks close the pool and an embedded database.
 */
@Injectable()
export class GracefulShutdown implements BeforeApplicationShutdown, OnApplicationShutdown {
  private readonly logger = new Logger('Shutdown');
  private grpcServer?: GrpcServer;
  private deadline?: NodeJS.Timeout;
  private closeIdle?: NodeJS.Timeout;
  private readonly drainedListeners: (() => void)[] = [];

  constructor(
    private readonly config: AppConfig,
    private readonly health: HealthService,
    private readonly adapterHost: HttpAdapterHost,
    @Inject(ROOT_LOGGER) private readonly rootLogger: PinoLogger,
  ) {}

  /** The gRPC server of the hybrid app, force-closed when calls outlive the timeout. */
  attachGrpcServer(server: GrpcServer): void {
    this.grpcServer = server;
  }

  /**
   * `listener` runs once the drain is over, before the servers stop accepting: calls that would
   * otherwise wait on (a long poll, a stream) end there, and their clients go to another instance.
   */
  onDrained(listener: () => void): void {
    this.drainedListeners.push(listener);
  }

  async beforeApplicationShutdown(signal?: string): Promise<void> {
    this.health.beginShutdown();
    const { shutdownDrainMs, shutdownTimeoutMs } = this.config;
    this.logger.log(`${signal ?? 'close'}: readiness off, draining for ${shutdownDrainMs} ms`);
    await sleep(shutdownDrainMs);
    for (const listener of this.drainedListeners) listener();

    const server = this.adapterHost.httpAdapter?.getHttpServer() as HttpServer | undefined;
    this.deadline = setTimeout(() => {
      this.logger.warn(`requests still open after ${shutdownTimeoutMs} ms: closing them`);
      server?.closeAllConnections();
      this.grpcServer?.forceShutdown();
    }, shutdownTimeoutMs);
    // server.close() drops only the keep-alive connections idle at that moment; one that finishes
    // its request later would stay open for the keep-alive timeout. Close those as they go idle.
    this.closeIdle = setInterval(() => server?.closeIdleConnections(), 50);
  }

  onApplicationShutdown(): void {
    clearTimeout(this.deadline);
    clearInterval(this.closeIdle);
    this.logger.log('stopped');
    // Log lines are written asynchronously; main.ts exits the process right after the hooks.
    this.rootLogger.flush();
  }
}
