import { Injectable } from '@nestjs/common';

/**
 * What the last readiness check found of the primary database: HealthService (src/health/) writes
 * it once a second, the metrics (`db_primary_up`) read it when scraped. Plain state in this layer,
 * so the health checks know nothing of metrics and the metrics nothing of the health module.
 */
@Injectable()
export class PrimaryStatus {
  /** The primary answered the last check as a writable node; false before the first one. */
  up = false;
}
