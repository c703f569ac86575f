import type { INestApplication } from '@nestjs/common';
import { AbstractLoader, ExpressLoader } from '@nestjs/serve-static';
import { Test } from '@nestjs/testing';
import pg from 'pg';
import request from 'supertest';
import type { Logger } from 'pino';
import { DataSource } from 'typeorm';
import { AppModule } from '../../src/app.module.js';
import { configureApp } from '../../src/app.setup.js';
import { grpcOptions } from '../../src/grpc/grpc-options.js';
import { AppConfig } from '../../src/config/app-config.js';
import { validateEnv } from '../../src/config/env.validation.js';
import { ROOT_LOGGER } from '../../src/observability/logging.js';
import { freePort } from '../../scripts/lib/ports.mjs';
import { waitFor } from '../../scripts/lib/service-process.mjs';
import { appendFileSync } from 'node:fs';
import { describeDisagreements, observedAgent, startOpenApiProxy } from './openapi-proxy.js';
import { MetricsServer } from '../../src/observability/metrics-server.js';
import { TcpProxy } from './tcp-proxy.js';
import { testDatabaseUrl } from './test-database.js';

// Re-exported for the specs that import them from here: the ports' helpers (shared with bench/
// and scripts/) and the test database's URL.
export { freePort, freePorts } from '../../scripts/lib/ports.mjs';
export { testDatabaseUrl } from './test-database.js';

export const TEST_API_KEYS = ['test-key-current-0123456789', 'test-key-previous-9876543210'];

export interface TestApp {
  app: INestApplication;
  config: AppConfig;
  dataSource: DataSource;
  /** supertest agent bound to the app's 127.0.0.1 URL */
  http: () => ReturnType<typeof request>;
  url: string;
  /** Prometheus metrics, on their own port (never on `url`). */
  metricsUrl: string;
  /** `path` on the metrics port, which also serves the kubelet's probes. */
  metricsPortUrl(path: string): string;
  grpcAddress: string;
  close(): Promise<void>;
}

/**
 * Builds the real application (AppModule, the same configureApp as main.ts) against the test
 * database and listens on 127.0.0.1. With `grpc`, the hybrid gRPC transport is started too.
 */
export async function createTestApp(
  options: { grpc?: boolean; env?: Record<string, string>; logger?: Logger } = {},
): Promise<TestApp> {
  const grpcPort = options.grpc ? await freePort() : 0;
  const env = validateEnv({
    HOST: '127.0.0.1',
    DATABASE_URL: testDatabaseUrl(),
    MIGRATE_ON_BOOT: 'true',
    DB_RETRY_ATTEMPTS: '0',
    API_KEYS: TEST_API_KEYS.join(','),
    GRPC_PORT: String(grpcPort),
    METRICS_PORT: '0',
    SHUTDOWN_DRAIN_MS: '0',
    NODE_ENV: 'test',
    LOG_LEVEL: process.env.TEST_LOGS ? 'debug' : 'silent',
    ...options.env,
  });
  const config = AppConfig.fromEnv(env);
  const builder = Test.createTestingModule({ imports: [AppModule] })
    .overrideProvider(AppConfig)
    .useValue(config)
    // ServeStaticModule picks its loader from the HTTP adapter while providers are built; a
    // testing module gets its adapter only later, in createNestApplication, so it would pick the
    // no-op loader and serve no files. NestFactory (main.ts) does not have this problem.
    .overrideProvider(AbstractLoader)
    .useClass(ExpressLoader);
  if (options.logger) builder.overrideProvider(ROOT_LOGGER).useValue(options.logger);
  const moduleRef = await builder.compile();
  const app = moduleRef.createNestApplication({
    bodyParser: false,
    logger: process.env.TEST_LOGS ? ['error', 'warn', 'log'] : ['fatal'],
  });
  configureApp(app);
  if (options.grpc) {
    app.connectMicroservice(grpcOptions(app));
    await app.startAllMicroservices();
  }
  await app.listen(0, '127.0.0.1');
  const url = (await app.getUrl()).replace('[::1]', '127.0.0.1');
  // TEST_OPENAPI_PROXY=1: http() goes through Prism, checking each exchange against openapi.json.
  const proxy = process.env.TEST_OPENAPI_PROXY === '1' ? await startOpenApiProxy(url) : undefined;
  const metricsPortUrl = (path: string) => `http://127.0.0.1:${app.get(MetricsServer).port}${path}`;
  return {
    app,
    config,
    dataSource: app.get(DataSource),
    http: proxy ? () => observedAgent(request(proxy.url), proxy, url) : () => request(url),
    url,
    metricsUrl: metricsPortUrl('/metrics'),
    metricsPortUrl,
    grpcAddress: `127.0.0.1:${grpcPort}`,
    close: async () => {
      await app.close();
      if (!proxy) return;
      await proxy.close();
      const report = process.env.TEST_OPENAPI_PROXY_REPORT;
      if (report) {
        for (const exchange of proxy.exchanges)
          appendFileSync(report, `${JSON.stringify(exchange)}\n`);
      }
      const disagreements = proxy.disagreements();
      if (disagreements.length > 0) {
        throw new Error(
          `openapi.json and the service disagree on ${disagreements.length} exchange(s):\n${describeDisagreements(disagreements)}`,
        );
      }
    },
  };
}

/**
 * A test app whose database connections go through a TcpProxy the test can cut and restore.
 * `close()` restores the proxy, empties the tables, closes the app and stops the proxy.
 */
export async function createTestAppBehindProxy(
  options: { grpc?: boolean; logger?: Logger; env?: Record<string, string> } = {},
): Promise<TestApp & { proxy: TcpProxy }> {
  const target = new URL(testDatabaseUrl());
  const proxy = new TcpProxy(target.hostname, Number(target.port || 5432));
  await proxy.start();
  const viaProxy = new URL(target);
  viaProxy.host = `127.0.0.1:${proxy.port}`;
  const app = await createTestApp({
    grpc: options.grpc,
    logger: options.logger,
    env: { DATABASE_URL: viaProxy.toString(), DB_CONNECT_TIMEOUT_MS: '500', ...options.env },
  });
  return {
    ...app,
    proxy,
    close: async () => {
      await proxy.restore();
      // Connection attempts back off for up to a second after a failure.
      await waitFor(
        'the database behind the proxy',
        async () => (await app.dataSource.query('SELECT 1')).length === 1,
        5000,
      );
      await resetDatabase(app.dataSource);
      await app.close();
      await proxy.cut();
    },
  };
}

/** Empties every entity table (the migrations table stays), restarting the id sequences. */
export async function resetDatabase(dataSource: DataSource): Promise<void> {
  const tables = dataSource.entityMetadatas.map(({ tableName }) => `"${tableName}"`).join(', ');
  await dataSource.query(`TRUNCATE ${tables} RESTART IDENTITY CASCADE`);
}

/**
 * A test app with gRPC on a scratch database of its own (below), for a spec that changes the
 * schema or needs one of its own: `prepare` runs on the empty database before the app starts.
 * `close()` closes the app and drops the database.
 */
export async function createScratchTestApp(
  name: string,
  options: {
    prepare?: (url: string) => Promise<void>;
    env?: Record<string, string>;
    logger?: Logger;
  } = {},
): Promise<TestApp & { databaseUrl: string }> {
  const scratch = await scratchDatabase(name);
  try {
    await options.prepare?.(scratch.url);
    const app = await createTestApp({
      grpc: true,
      logger: options.logger,
      env: { DATABASE_URL: scratch.url, ...options.env },
    });
    const close = async () => {
      await app.close();
      await scratch.drop();
    };
    return { ...app, databaseUrl: scratch.url, close };
  } catch (error) {
    await scratch.drop();
    throw error;
  }
}

/**
 * A fresh, empty database on the test server, for a spec whose processes must not share the test
 * database (they migrate it themselves). `drop()` removes it, closing what is still connected.
 */
export async function scratchDatabase(
  name: string,
): Promise<{ url: string; drop(): Promise<void> }> {
  const admin = new pg.Client({ connectionString: testDatabaseUrl() });
  await admin.connect();
  const database = admin.escapeIdentifier(name);
  await admin.query(`DROP DATABASE IF EXISTS ${database}`);
  await admin.query(`CREATE DATABASE ${database}`);
  const target = new URL(testDatabaseUrl());
  target.pathname = `/${name}`;
  return {
    url: target.toString(),
    drop: async () => {
      await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
      await admin.end();
    },
  };
}
