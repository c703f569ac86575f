// The built service exporting spans to a test receiver, as the tracing specs start it: the test
// database, the batch processor flushing every 50 ms, no shutdown drain. The loader hook of
// src/telemetry.ts only works in a real process preloaded with `node --import`, hence not the
// in-process test app.
import { randomBytes } from 'node:crypto';
import type pg from 'pg';
import { type ServiceProcess, startOnTestDatabase } from './service-process.js';

/** Starts the service with `env` (the OTEL_* under test) and waits until it is ready. */
export function startTracedService(env: Record<string, string>): Promise<ServiceProcess> {
  return startOnTestDatabase(
    { OTEL_BSP_SCHEDULE_DELAY: '50', SHUTDOWN_DRAIN_MS: '0', ...env },
    { timeoutMs: 30_000 },
  );
}

/** A user inserted straight into the database (no span of its own); its id. */
export async function insertUser(db: pg.Client): Promise<number> {
  const { rows } = await db.query<{ id: number }>(
    `INSERT INTO users (name, email) VALUES ('Ada', $1) RETURNING id`,
    [`ada-${randomBytes(4).toString('hex')}@example.com`],
  );
  return rows[0].id;
}
