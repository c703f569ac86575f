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
import { isConnectionLost } from '../database/database-errors.js';
import { AppConfig } from '../config/app-config.js';
import { PrimaryStatus } from '../database/primary-status.js';
import { driverGate } from '../database/queryable.js';
import { ReadReplicas } from '../database/read-replicas.js';
import { driverPool } from '../internals/typeorm-driver.js';
import { SchemaReadiness } from './schema-readiness.js';

/** The gRPC service names whose health the service reports; "" is the server as a whole. */
export const GRPC_HEALTH_SERVICES = ['', 'users.Users'] as const;
const READY_TIMEOUT_MS = 1000;
/** How often the database is checked, and how long a check's answer serves readiness. */
export const HEALTH_CHECK_INTERVAL_MS = 1000;

export interface Readiness {
  ok: boolean;
  database: 'up' | 'down';
  shuttingDown: boolean;
  /** Present while authentication is on and no signing key set has been fetched yet. */
  keys?: 'not fetched';
  /** Present while the database answers but lacks a migration this build knows (SchemaReadiness). */
  migrations?: 'pending';
  /**
   * Present while the primary is down and a read replica serves the lists: the instance stays
   * ready for the reads the replicas may answer, and answers writes and reads by id with 503.
   */
  replicas?: 'serving';
}

/**
 * Readiness of this instance, shared by HTTP (/health/ready) and gRPC (grpc.health.v1.Health):
 * ready while the primary database answers, accepts writes, has every migration this build knows
 * applied (checked until it has, then no more: SchemaReadiness), and shutdown has not begun.
 * With read replicas (DATABASE_READ_URLS), HTTP readiness also holds while the primary is down
 * or failing over and a replica serves the lists (ReadReplicas.serving): a primary outage then
 * takes down writes and reads by id, which answer 503 at once, but not the lists. gRPC's health
 * follows the primary alone: its one method, GetUser, reads there.
 *
 * One check a second, whoever asks: a timer checks the database and sets the gRPC statuses
 * (Check and Watch answer from them), and /health/ready answers from the last check while it is
 * under a second old. A probe arriving later, after a pooled connection broke or a connection
 * attempt failed since that check, or while requests queue for a connection, runs a new check,
 * shared with any other caller waiting for one. So probes, however many, add no load on a
 * database that is down, and the service's connection attempts stay those of the pool's
 * connection gate (src/database/connection-gate.ts).
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
  private checkedAt = 0;
  /** When a pooled connection last came back to requests queued for one (Date.now()). */
  private handedOnAt = 0;
  private checking?: Promise<boolean>;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly config: AppConfig,
    private readonly primary: PrimaryStatus,
    private readonly schema: SchemaReadiness,
    private readonly replicas: ReadReplicas,
    // With authentication on, an instance that cannot verify tokens yet is not ready either.
    @Optional() private readonly tokens?: TokenVerifierService,
  ) {}

  onModuleInit(): void {
    const pool = driverPool(this.dataSource);
    pool?.on('release', () => {
      if (pool.waitingCount > 0) this.handedOnAt = Date.now();
    });
    void this.check();
    this.timer = setInterval(() => void this.check(), HEALTH_CHECK_INTERVAL_MS);
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

  /** The database's state: the last check's while it still holds, else a new (shared) check. */
  async databaseUp(): Promise<boolean> {
    if (this.lastDatabaseUp !== undefined && this.lastCheckHolds()) return this.lastDatabaseUp;
    return this.check();
  }

  async readiness(): Promise<Readiness> {
    const up = !this.shuttingDown && (await this.databaseUp());
    // A schema seen up to date before the outage: an instance that started during it is not ready.
    const onReplicas = !up && !this.shuttingDown && this.replicas.serving();
    const keys = this.tokens?.ready ?? true;
    const schema = this.schema.current;
    return {
      ok: (up || onReplicas) && keys && schema,
      ...(!keys && { keys: 'not fetched' as const }),
      // A reason of its own only while the database answers (else that is the reason).
      ...(up && !schema && { migrations: 'pending' as const }),
      database: up ? 'up' : 'down',
      shuttingDown: this.shuttingDown,
      ...(onReplicas && { replicas: 'serving' as const }),
    };
  }

  private lastCheckHolds(): boolean {
    const now = Date.now();
    // While a check is under way (the timer's, once a second, may wait its turn for a connection
    // on a busy pool), its predecessor answers for a second more rather than keep probes waiting.
    const maxAge = HEALTH_CHECK_INTERVAL_MS * (this.checking ? 2 : 1);
    if (now - this.checkedAt >= maxAge) return false;
    // Requests queued for a connection: the pool may be exhausted by stuck statements, which a
    // check (waiting in that queue for at most its bound) tells apart from a busy moment. A pool
    // that handed a connection on to a queued request within the interval is busy, not stuck: the
    // probe answers from the check, however long the queue (load alone never fails readiness).
    const waiting = (driverPool(this.dataSource)?.waitingCount ?? 0) > 0;
    if (waiting && now - this.handedOnAt >= HEALTH_CHECK_INTERVAL_MS) return false;
    const gate = driverGate(this.dataSource);
    if (!gate) return true;
    return gate.lostAt < this.checkedAt && !(this.lastDatabaseUp && gate.failing);
  }

  /** One check at a time: callers arriving while one runs share its answer. */
  private check(): Promise<boolean> {
    this.checking ??= this.probe()
      .then((up) => {
        this.recordDatabaseUp(up);
        return up;
      })
      .finally(() => {
        this.checking = undefined;
      });
    return this.checking;
  }

  /**
   * A bounded probe: false when the database does not answer within about a second, or
   * answers as a read-only node (a standby, or a primary being failed over), where every write
   * would fail: the mesh should stop routing here until DATABASE_URL reaches a writable primary.
   */
  private async probe(): Promise<boolean> {
    let timeout: NodeJS.Timeout | undefined;
    let expired = false;
    const timedOut = new Promise<boolean>((resolve) => {
      timeout = setTimeout(() => {
        expired = true;
        resolve(false);
      }, READY_TIMEOUT_MS);
    });
    const query = () =>
      this.dataSource
        .query(`SELECT current_setting('transaction_read_only') = 'off' AS "writable"`)
        .then(async ([row]: { writable: boolean }[]) => {
          const writable = row?.writable === true;
          // Until the schema has caught up with this build, each check reads the migrations too.
          if (writable) await this.schema.refresh();
          return writable;
        });
    // Pooled connections the server has just closed (pg_terminate_backend, a restarted PgBouncer)
    // fail once each and leave the pool: ask again, at most once per pooled connection, until a
    // live connection answers. A failed connection attempt ends it: the pool then refuses new
    // attempts for a while (the connection gate), which is the answer.
    const answered = (async () => {
      for (let attempt = 0; attempt <= this.config.database.poolSize; attempt++) {
        try {
          return await query();
        } catch (error) {
          if (expired || !isConnectionLost(error) || driverGate(this.dataSource)?.failing) {
            return false;
          }
        }
      }
      return false;
    })();
    try {
      return await Promise.race([answered, timedOut]);
    } finally {
      clearTimeout(timeout);
    }
  }

  private recordDatabaseUp(up: boolean): void {
    this.checkedAt = Date.now();
    if (up !== this.lastDatabaseUp && this.lastDatabaseUp !== undefined) {
      this.logger.warn(`database is ${up ? 'reachable again' : 'unreachable or read-only'}`);
    }
    this.lastDatabaseUp = up;
    this.primary.up = up;
    if (!this.shuttingDown) {
      const ready = up && (this.tokens?.ready ?? true) && this.schema.current;
      this.setGrpcStatus(ready ? 'SERVING' : 'NOT_SERVING');
    }
  }

  private setGrpcStatus(status: 'SERVING' | 'NOT_SERVING'): void {
    for (const name of GRPC_HEALTH_SERVICES) this.grpcHealth.setStatus(name, status);
  }
}
