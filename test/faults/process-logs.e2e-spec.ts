import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { freePort } from '../../scripts/lib/ports.mjs';
import { read } from '../support/project-files.js';
import {
  buildService,
  type ServiceProcess,
  startOnTestDatabase,
  startService,
  waitFor,
  waitUntilReady,
} from '../support/service-process.js';
import { TcpProxy } from '../support/tcp-proxy.js';
import { testDatabaseUrl } from '../support/test-database.js';

/** The fields of every line, and the ones some lines add (a request's, an error's, a span's). */
const LINE_FIELDS = ['level', 'time', 'service', 'context', 'msg'];
const OPTIONAL_FIELDS = new Set([
  'err',
  'requestId',
  'req',
  'res',
  'route',
  'durationMs',
  'auth',
  'grpc',
  'trace_id',
  'span_id',
]);
const LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal'];
/** TypeORM's delay between two connection attempts at boot (database.module.ts). */
const RETRY_DELAY_MS = Number(
  /retryDelay:\s*([\d_]+)/.exec(read('src/database/database.module.ts'))?.[1],
);

/** Every line the process wrote, each of which must be one JSON object. */
function lines(service: ServiceProcess): string[] {
  return service
    .output()
    .split('\n')
    .filter((line) => line.length > 0);
}

function expectEveryLineJson(service: ServiceProcess): Record<string, unknown>[] {
  const all = lines(service);
  expect(all.length).toBeGreaterThan(0);
  const notJson = all.filter((line) => {
    try {
      const value: unknown = JSON.parse(line);
      return typeof value !== 'object' || value === null || Array.isArray(value);
    } catch {
      return true;
    }
  });
  expect(notJson).toEqual([]);
  return all.map((line) => JSON.parse(line) as Record<string, unknown>);
}

/**
 * pino's shape on every line, Nest's own boot lines included: the level's name, the ISO time the
 * line was written (never earlier than the line before), `service`, `context` and `msg`, and no
 * field but those a request, an error or a span adds.
 */
function expectLogSchema(records: Record<string, unknown>[]): void {
  let previous = 0;
  for (const record of records) {
    const line = JSON.stringify(record);
    expect([line, LEVELS.includes(String(record.level))]).toEqual([line, true]);
    expect(record).toEqual(
      expect.objectContaining({
        time: expect.any(String),
        service: 'users-service',
        context: expect.any(String),
        msg: expect.any(String),
      }),
    );
    const unknown = Object.keys(record).filter(
      (key) => !LINE_FIELDS.includes(key) && !OPTIONAL_FIELDS.has(key),
    );
    expect([line, unknown]).toEqual([line, []]);
    const time = Date.parse(String(record.time));
    expect(new Date(time).toISOString()).toBe(record.time);
    expect(time).toBeGreaterThanOrEqual(previous);
    previous = time;
  }
}

describe('every line the process writes is one JSON object (e2e)', () => {
  beforeAll(() => buildService());

  it('through boot, requests, a drained shutdown', async () => {
    const service = await startOnTestDatabase({
      NODE_ENV: 'production',
      // Production must choose; these logs are about requests, not tokens.
      AUTH_MODE: 'none',
      SHUTDOWN_DRAIN_MS: '1000',
      LOG_LEVEL: 'debug',
    });
    try {
      await fetch(`${service.url}/users/999999`);
      await fetch(`${service.url}/users`, { method: 'POST', body: 'not json' });
      service.child.kill('SIGTERM');
      // Readiness during the planned drain: 503 (once the signal is handled), and not an error
      // in the logs.
      await waitFor(
        'readiness 503 during the drain',
        async () => (await fetch(`${service.url}/health/ready`)).status === 503,
      );
      expect(await service.exited).toEqual({ code: 0, signal: null });
    } finally {
      await service.stop();
    }
    const records = expectEveryLineJson(service);
    expectLogSchema(records);
    const messages = records.map((record) => String(record.msg ?? record.message));
    expect(messages[0]).toBe('Starting Nest application...');
    expect(messages).toContain('stopped');
    const drainProbe = records.find(
      (record) =>
        (record.req as { path?: string } | undefined)?.path === '/health/ready' &&
        (record.res as { statusCode?: number }).statusCode === 503,
    );
    expect(drainProbe).toMatchObject({ level: 'info', res: { statusCode: 503 } });
    // Refused before routing, but by a route that exists: labelled with it.
    const refused = records.find(
      (record) => (record.res as { statusCode?: number })?.statusCode === 415,
    );
    expect(refused).toMatchObject({ route: '/users' });
  });

  it('through a boot refused for a bad variable', async () => {
    const service = await startService({ DATABASE_URL: testDatabaseUrl(), PORT: 'eighty' });
    expect((await service.exited).code).toBe(1);
    const records = expectEveryLineJson(service);
    expectLogSchema(records);
    expect(JSON.stringify(records)).toContain('PORT must be an integer number');
  });

  it('through a boot that cannot reach the database', async () => {
    const service = await startService({
      DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none_test',
      DB_RETRY_ATTEMPTS: '0',
    });
    expect((await service.exited).code).toBe(1);
    expectLogSchema(expectEveryLineJson(service));
  });

  it('through connection retries at boot, each line stamped when it was written', async () => {
    expect(RETRY_DELAY_MS).toBeGreaterThan(0);
    const target = new URL(testDatabaseUrl());
    const proxy = new TcpProxy(target.hostname, Number(target.port || 5432));
    await proxy.start();
    // Refused until restored: the service retries its first connection.
    await proxy.cut();
    const viaProxy = new URL(target);
    viaProxy.host = `127.0.0.1:${proxy.port}`;
    const service = await startService({
      DATABASE_URL: viaProxy.toString(),
      DB_RETRY_ATTEMPTS: '20',
      MIGRATE_ON_BOOT: 'true',
      LOG_LEVEL: 'debug',
    });
    const retries = () =>
      expectEveryLineJson(service).filter((record) => record.context === 'TypeOrmModule');
    try {
      await waitFor(
        'three connection retries',
        () => Promise.resolve().then(() => retries().length >= 3),
        30_000,
      );
      await proxy.restore();
      await waitUntilReady(service);
      expect((await fetch(`${service.url}/users/999999`)).status).toBe(404);
    } finally {
      await service.stop();
      await proxy.cut();
    }
    const records = expectEveryLineJson(service);
    expectLogSchema(records);
    expect(records[0]).toMatchObject({
      context: 'NestFactory',
      msg: 'Starting Nest application...',
    });
    const lines = retries();
    expect(lines[0]).toMatchObject({
      level: 'error',
      msg: expect.stringContaining('ECONNREFUSED'),
      err: expect.objectContaining({ type: 'Error' }),
    });
    // Written when each attempt failed, not flushed together later: about a retry delay apart.
    const times = lines.map((record) => Date.parse(String(record.time)));
    for (let i = 1; i < times.length; i++) {
      expect(times[i] - times[i - 1]).toBeGreaterThan(RETRY_DELAY_MS / 2);
    }
    const request = records.find(
      (record) => (record.req as { path?: string } | undefined)?.path === '/users/999999',
    );
    expect(request).toMatchObject({ context: 'HTTP', res: { statusCode: 404 } });
  });

  it('through a boot on the embedded database', async () => {
    // As root, embedded PostgreSQL runs as the postgres OS user, which owns only this directory.
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'users-service-logs-pg-'));
    const service = await startService({ PG_DATA_DIR: dataDir, PG_PORT: String(await freePort()) });
    try {
      await waitUntilReady(service);
    } finally {
      await service.stop();
      await rm(dataDir, { recursive: true, force: true });
    }
    const records = expectEveryLineJson(service);
    expectLogSchema(records);
    expect(records).toContainEqual(
      expect.objectContaining({
        context: 'Database',
        msg: expect.stringMatching(
          /^embedded PostgreSQL on postgres:\/\/postgres:\*\*\*@127\.0\.0\.1:/,
        ),
      }),
    );
  });
});
