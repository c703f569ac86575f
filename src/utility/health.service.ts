import {
  Injectable,
  Logger,
  Optional,
  type OnApplicationShutdown,
  type OnModuleInit,
} from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { HealthImplementation } from 'grpc-health-check';
import { DataSource } from 'typeorm';
import { TokenVerifierService } from '../auth/token-verifier.service.js';
import { isConnectionLost } from '../common/database-errors.js';

/** The gRPC service names whose health the service reports; "" is the server as a whole. */
export const GRPC_HEALTH_SERVICES = ['', 'users.Users'] as const;
const READY_TIMEOUT_MS = 1000;
const GRPC_HEALTH_INTERVAL_MS = 1000;

export interface Readiness {
  ok: boolean;
  database: 'up' | 'down';
  shuttingDown: boolean;
  /** Present while authentication is on and no signing key set has been fetched yet. */
  keys?: 'not fetched';
}

/**
 * Readiness of this instance, shared by HTTP (/health/ready) and gRPC (grpc.health.v1.Health):
 * ready while the primary database answers, accepts writes, and shutdown has not begun.
 */
@Injectable()
export class HealthService implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger(HealthService.name);
  /** Serves grpc.health.v1.Health; its statuses follow the database and shutdown. */
  readonly grpcHealth = new HealthImplementation(
    Object.fromEntries(GRPC_HEALTH_SERVICES.map((name) => [name, 'NOT_SERVING' as const])),
  );
  private shuttingDown = false;
  private timer?: NodeJS.Timeout;
  private lastDatabaseUp?: boolean;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    // With authentication on, an instance that cannot verify tokens yet is not ready either.
    @Optional() private readonly tokens?: TokenVerifierService,
  ) {}

  onModuleInit(): void {
    void this.refreshGrpcHealth();
    this.timer = setInterval(() => void this.refreshGrpcHealth(), GRPC_HEALTH_INTERVAL_MS);
    this.timer.unref();
  }

  onApplicationShutdown(): void {
    clearInterval(this.timer);
  }

  get isShuttingDown(): boolean {
    return this.shuttingDown;
  }

  /** From now on readiness fails, so the load balancer or mesh stops routing here. */
  beginShutdown(): void {
    this.shuttingDown = true;
    clearInterval(this.timer);
    this.setGrpcStatus('NOT_SERVING');
  }

  /**
   * A bounded probe: false when the database does not answer within about a second, or
   * answers as a read-only node (a standby, or a primary being failed over), where every write
   * would fail: the mesh should stop routing here until DATABASE_URL reaches a writable primary.
   */
  async databaseUp(): Promise<boolean> {
    let timeout: NodeJS.Timeout | undefined;
    let expired = false;
    const timedOut = new Promise<boolean>((resolve) => {
      timeout = setTimeout(() => {
        expired = true;
        resolve(false);
      }, READY_TIMEOUT_MS);
    });
    const probe = () =>
      this.dataSource
        .query(`SELECT current_setting('transaction_read_only') = 'off' AS "writable"`)
        .then(([row]: { writable: boolean }[]) => row?.writable === true);
    // Pooled connections the server has just closed (pg_terminate_backend, a restarted PgBouncer)
    // fail once each and leave the pool: ask again, within the one bound, until a live connection
    // answers. Any other failure (no connection free in time, a timeout) is the answer.
    const answered = (async () => {
      for (;;) {
        try {
          return await probe();
        } catch (error) {
          if (expired || !isConnectionLost(error)) return false;
        }
      }
    })();
    try {
      return await Promise.race([answered, timedOut]);
    } finally {
      clearTimeout(timeout);
    }
  }

  async readiness(): Promise<Readiness> {
    const up = !this.shuttingDown && (await this.databaseUp());
    const keys = this.tokens?.ready ?? true;
    return {
      ok: up && keys,
      ...(!keys && { keys: 'not fetched' as const }),
      database: up ? 'up' : 'down',
      shuttingDown: this.shuttingDown,
    };
  }

  private async refreshGrpcHealth(): Promise<void> {
    const up = await this.databaseUp();
    if (this.shuttingDown) return;
    if (up !== this.lastDatabaseUp) {
      if (this.lastDatabaseUp !== undefined) {
        this.logger.warn(`database is ${up ? 'reachable again' : 'unreachable or read-only'}`);
      }
      this.lastDatabaseUp = up;
    }
    this.setGrpcStatus(up && (this.tokens?.ready ?? true) ? 'SERVING' : 'NOT_SERVING');
  }

  private setGrpcStatus(status: 'SERVING' | 'NOT_SERVING'): void {
    for (const name of GRPC_HEALTH_SERVICES) this.grpcHealth.setStatus(name, status);
  }
}
