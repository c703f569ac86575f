// docker-compose.yml: the database, the one-off migration and the service, started in order with
// settings the service accepts.
import { existsSync, statSync } from 'node:fs';
import path from 'node:path';
import { validateEnv } from '../../src/config/env.validation.js';
import { compose, composeEnv, composeSeconds, type ComposeService } from '../support/compose.js';
import { healthCheckTarget } from '../support/dockerfile.js';
import {
  defaultGrpcPort,
  defaultPort,
  envDefaults,
  envExample,
  healthRoute,
  npmRunScript,
  pkg,
  read,
  root,
} from '../support/project-files.js';

/** The database role each service built from the Dockerfile logs in as, and its password. */
const LOGINS: Record<string, { role: string; password: string }> = {
  migrate: { role: 'users_service_migrate', password: 'USERS_MIGRATE_PASSWORD' },
  app: { role: 'users_service_app', password: 'USERS_APP_PASSWORD' },
};

describe('docker-compose.yml', () => {
  const { postgres, migrate, app } = compose.services;
  const builtFromDockerfile = ([, svc]: [string, ComposeService]) => svc.build !== undefined;

  it('has postgres 18 with a pg_isready health check and its data on a named volume', () => {
    expect(postgres.image).toMatch(/^postgres:18\b/);
    expect([postgres.healthcheck?.test].flat().join(' ')).toMatch(/\bpg_isready\b/);
    // PostgreSQL 18 images keep PGDATA under /var/lib/postgresql/18/docker and refuse a volume at
    // the old /var/lib/postgresql/data.
    const volume = (postgres.volumes ?? []).map((v) =>
      typeof v === 'string' ? { source: v.split(':')[0], target: v.split(':')[1] } : v,
    );
    expect(volume[0]).toEqual({ source: 'pgdata', target: '/var/lib/postgresql' });
    expect(Object.keys(compose.volumes ?? {})).toContain('pgdata');
  });

  it('creates the database roles when the volume is initialised: roles.sql, then the passwords', () => {
    const mounts = (postgres.volumes ?? [])
      .filter((v): v is string => typeof v === 'string')
      .map((v) => v.split(':'))
      .filter(([, target]) => target.startsWith('/docker-entrypoint-initdb.d/'));
    expect(mounts).toEqual([
      ['./deploy/sql/roles.sql', '/docker-entrypoint-initdb.d/10-roles.sql', 'ro'],
      ['./deploy/sql/compose-passwords.sh', '/docker-entrypoint-initdb.d/20-passwords.sh', 'ro'],
    ]);
    for (const [source] of mounts) expect(existsSync(path.join(root, source))).toBe(true);
    // Executable, so the image's entrypoint runs it rather than sourcing it into its own shell.
    expect(statSync(path.join(root, 'deploy/sql/compose-passwords.sh')).mode & 0o111).not.toBe(0);
    const script = read('deploy/sql/compose-passwords.sh');
    const env = composeEnv(postgres);
    for (const variable of ['USERS_MIGRATE_PASSWORD', 'USERS_APP_PASSWORD']) {
      expect(script).toContain(`"$${variable}"`);
      expect(env.get(variable)).toBeTruthy();
    }
  });

  it('builds migrate and app from the Dockerfile as one image', () => {
    const built = Object.entries(compose.services).filter(builtFromDockerfile);
    expect(built.map(([name]) => name).sort()).toEqual(['app', 'migrate']);
    for (const [, svc] of built) {
      const build = typeof svc.build === 'string' ? { context: svc.build } : svc.build!;
      expect(build.context).toBe('.');
      expect(build.dockerfile ?? 'Dockerfile').toBe('Dockerfile');
      expect(svc.image).toBe(app.image);
    }
    expect(app.command).toBeUndefined(); // the image's CMD
  });

  it('migrates once with an npm script that exists, after postgres is healthy', () => {
    const script = npmRunScript(migrate.command);
    expect(script).toBe('migration:run');
    expect(pkg.scripts[script!]).toBeDefined();
    expect(migrate.depends_on).toEqual({ postgres: { condition: 'service_healthy' } });
  });

  it('starts app after postgres is healthy and the migration succeeded', () => {
    expect(app.depends_on).toEqual({
      postgres: { condition: 'service_healthy' },
      migrate: { condition: 'service_completed_successfully' },
    });
  });

  it('publishes the HTTP and gRPC ports and health-checks /health', () => {
    const targets = (app.ports ?? []).map((port) =>
      typeof port === 'object' ? port.target : Number(String(port).split(':').at(-1)),
    );
    expect(targets.sort()).toEqual([defaultPort, defaultGrpcPort].sort());
    expect(healthCheckTarget([app.healthcheck?.test].flat().join(' '))).toEqual({
      port: defaultPort,
      path: healthRoute('live'),
    });
  });

  it('only sets variables the service reads, with values it accepts', () => {
    for (const [name, svc] of Object.entries(compose.services).filter(builtFromDockerfile)) {
      const env = composeEnv(svc);
      for (const variable of env.keys()) {
        expect([name, variable, envExample.has(variable)]).toEqual([name, variable, true]);
      }
      expect(env.get('NODE_ENV')).toBe('production');
      expect(() => validateEnv(Object.fromEntries(env))).not.toThrow();
      const url = new URL(env.get('DATABASE_URL')!);
      const pg = composeEnv(postgres);
      // The migration logs in as the role that owns the schema, the service as the runtime role
      // (deploy/sql/roles.sql), each with the password compose-passwords.sh sets.
      const login = LOGINS[name];
      expect([url.hostname, url.port, decodeURIComponent(url.username)]).toEqual([
        'postgres',
        '5432',
        login.role,
      ]);
      expect(read('deploy/sql/roles.sql')).toContain(`CREATE ROLE ${login.role} LOGIN;`);
      expect(decodeURIComponent(url.password)).toBe(pg.get(login.password));
      expect(url.pathname).toBe(`/${pg.get('POSTGRES_DB')}`);
    }
    const env = composeEnv(app);
    expect(env.get('MIGRATE_ON_BOOT')).toBe('false');
    expect(env.get('API_KEYS')).toBeTruthy();
  });

  it('lets app drain and close before Docker kills it', () => {
    const env = composeEnv(app);
    const drain = Number(env.get('SHUTDOWN_DRAIN_MS') ?? envDefaults.SHUTDOWN_DRAIN_MS);
    const timeout = Number(env.get('SHUTDOWN_TIMEOUT_MS') ?? envDefaults.SHUTDOWN_TIMEOUT_MS);
    expect(composeSeconds(app.stop_grace_period ?? '10s') * 1000).toBeGreaterThan(drain + timeout);
  });
});
