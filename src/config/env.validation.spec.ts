import { AppConfig, parseByteSize } from './app-config.js';
import { ConfigError, validateEnv } from './env.validation.js';

describe(validateEnv.name, () => {
  it('applies the documented defaults', () => {
    const config = AppConfig.fromEnv(validateEnv({}));
    expect(config).toEqual(
      expect.objectContaining({
        port: 3000,
        grpcPort: 5000,
        apiKeys: [],
        logLevel: 'info',
        bodyLimitBytes: 102_400,
        shutdownDrainMs: 5000,
        shutdownTimeoutMs: 10_000,
      }),
    );
    // No DATABASE_URL: the embedded database, which migrates on boot by default.
    expect(config.database.migrateOnBoot).toBe(true);
  });

  it('does not migrate on boot by default with an external database', () => {
    const env = validateEnv({ DATABASE_URL: 'postgres://u:p@db:5432/users' });
    expect(AppConfig.fromEnv(env).database.migrateOnBoot).toBe(false);
    const migrating = validateEnv({
      DATABASE_URL: 'postgres://u:p@db:5432/users',
      MIGRATE_ON_BOOT: 'true',
    });
    expect(AppConfig.fromEnv(migrating).database.migrateOnBoot).toBe(true);
  });

  it('reads SCIM_TOKEN_SHA256 as lower-case digests and refuses anything else', () => {
    const digest = 'A'.repeat(64);
    const env = validateEnv({ SCIM_TOKEN_SHA256: ` ${digest} , ${'b'.repeat(64)}` });
    expect(AppConfig.fromEnv(env).scimTokenDigests).toEqual(['a'.repeat(64), 'b'.repeat(64)]);
    expect(() => validateEnv({ SCIM_TOKEN_SHA256: 'secret-token' })).toThrow(/SCIM_TOKEN_SHA256/);
  });

  it('splits and trims API_KEYS, dropping empty entries', () => {
    const env = validateEnv({ API_KEYS: ' a , b,,c ' });
    expect(AppConfig.fromEnv(env).apiKeys).toEqual(['a', 'b', 'c']);
  });

  it('reads DATABASE_READ_URLS as a comma-separated list of replica URLs', () => {
    const none = AppConfig.fromEnv(validateEnv({})).database;
    expect([none.readUrls, none.replicaMaxLagMs]).toEqual([[], 5000]);
    const env = validateEnv({
      DATABASE_READ_URLS: 'postgres://u:p@r1:5432/users, postgres://u:p@r2:5432/users',
      DB_REPLICA_MAX_LAG_MS: '250',
    });
    const { readUrls, replicaMaxLagMs } = AppConfig.fromEnv(env).database;
    expect(readUrls).toEqual(['postgres://u:p@r1:5432/users', 'postgres://u:p@r2:5432/users']);
    expect(replicaMaxLagMs).toBe(250);
    expect(() => validateEnv({ DATABASE_READ_URLS: 'postgres://u:p@r1/db,mysql://r2/db' })).toThrow(
      /DATABASE_READ_URLS must be comma-separated URLs/,
    );
    expect(() => validateEnv({ DB_REPLICA_MAX_LAG_MS: '-1' })).toThrow(/DB_REPLICA_MAX_LAG_MS/);
  });

  it('reads the failover settings: keepalive idle time and connection lifetime, with defaults', () => {
    expect(AppConfig.fromEnv(validateEnv({})).database).toEqual(
      expect.objectContaining({ keepAliveIdleS: 5, maxLifetimeS: 300, statementTimeoutMs: 5000 }),
    );
    const off = validateEnv({ DB_KEEPALIVE_IDLE_S: '0', DB_MAX_LIFETIME_S: '0' });
    expect(AppConfig.fromEnv(off).database).toEqual(
      expect.objectContaining({ keepAliveIdleS: 0, maxLifetimeS: 0 }),
    );
    expect(() => validateEnv({ DB_KEEPALIVE_IDLE_S: '5s', DB_MAX_LIFETIME_S: '-1' })).toThrow(
      /DB_KEEPALIVE_IDLE_S[\s\S]*DB_MAX_LIFETIME_S/,
    );
  });

  it('treats empty values as unset', () => {
    expect(validateEnv({ PORT: '', DATABASE_URL: ' ' }).PORT).toBe(3000);
  });

  it('names every invalid variable at once', () => {
    let error: unknown;
    try {
      validateEnv({
        PORT: '3000abc',
        GRPC_PORT: '70000',
        LOG_LEVEL: 'loud',
        BODY_LIMIT: 'lots',
        DATABASE_URL: 'mysql://x',
        MIGRATE_ON_BOOT: 'yes',
      });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const problems = (error as ConfigError).problems.join('\n');
    for (const name of [
      'PORT',
      'GRPC_PORT',
      'LOG_LEVEL',
      'BODY_LIMIT',
      'DATABASE_URL',
      'MIGRATE_ON_BOOT',
    ]) {
      expect(problems).toContain(name);
    }
    expect((error as ConfigError).problems).toHaveLength(6);
  });

  it('refuses production without DATABASE_URL', () => {
    expect(() => validateEnv({ NODE_ENV: 'production' })).toThrow(
      /DATABASE_URL is required when NODE_ENV=production/,
    );
    expect(() =>
      validateEnv({ NODE_ENV: 'production', DATABASE_URL: 'postgres://u@h/d', AUTH_MODE: 'none' }),
    ).not.toThrow();
  });

  it('refuses an IDEMPOTENCY_WAIT_MS that the statement timeout would cut short', () => {
    expect(() =>
      validateEnv({ DB_STATEMENT_TIMEOUT_MS: '2000', IDEMPOTENCY_WAIT_MS: '2000' }),
    ).toThrow(/IDEMPOTENCY_WAIT_MS \(2000\) must be less than DB_STATEMENT_TIMEOUT_MS \(2000\)/);
    expect(() => validateEnv({ DB_STATEMENT_TIMEOUT_MS: '1000' })).toThrow(
      /IDEMPOTENCY_WAIT_MS \(2000\) must be less than/,
    );
    expect(() =>
      validateEnv({ DB_STATEMENT_TIMEOUT_MS: '2000', IDEMPOTENCY_WAIT_MS: '1999' }),
    ).not.toThrow();
    // No statement timeout: nothing cuts the wait short.
    expect(() =>
      validateEnv({ DB_STATEMENT_TIMEOUT_MS: '0', IDEMPOTENCY_WAIT_MS: '60000' }),
    ).not.toThrow();
  });
});

describe('database TLS settings', () => {
  const url = 'postgres://u:p@db:5432/users';
  const caFile = '/etc/users-service/db-ca/ca.crt';

  it('takes DB_CA_FILE as the CA of every database connection', () => {
    const env = validateEnv({ DATABASE_URL: url, DB_CA_FILE: caFile, DB_REQUIRE_TLS: 'true' });
    expect(AppConfig.fromEnv(env).database.caFile).toBe(caFile);
    expect(AppConfig.fromEnv(validateEnv({ DATABASE_URL: url })).database.caFile).toBeUndefined();
  });

  it('with DB_REQUIRE_TLS, refuses to start without DB_CA_FILE', () => {
    expect(() => validateEnv({ DATABASE_URL: url, DB_REQUIRE_TLS: 'true' })).toThrow(
      /DB_CA_FILE is required when DB_REQUIRE_TLS=true/,
    );
  });

  it('refuses ssl parameters in the URLs, which pg would let override DB_CA_FILE', () => {
    const error = (() => {
      try {
        validateEnv({
          DATABASE_URL: `${url}?sslmode=verify-full`,
          DATABASE_READ_URLS: `${url},${url}?sslrootcert=/ca.crt`,
          DB_CA_FILE: caFile,
        });
      } catch (caught) {
        return caught as ConfigError;
      }
    })();
    expect(error?.problems).toEqual([
      expect.stringMatching(/^DATABASE_URL: leave out ssl, sslmode and sslrootcert/),
      expect.stringMatching(/^DATABASE_READ_URLS: leave out ssl, sslmode and sslrootcert/),
    ]);
  });

  it('refuses DB_CA_FILE with the embedded database, which has no TLS', () => {
    expect(() => validateEnv({ DB_CA_FILE: caFile })).toThrow(/DB_CA_FILE needs DATABASE_URL/);
  });
});

describe('authentication settings', () => {
  const jwt = {
    AUTH_JWKS_URL: 'https://idp.example.com/jwks',
    AUTH_ISSUER: 'https://idp.example.com/',
    AUTH_AUDIENCE: 'users-service',
  };
  const production = { NODE_ENV: 'production', DATABASE_URL: 'postgres://u@h/d' };

  it('is off by default in development and test, with the defaults of the configuration table', () => {
    for (const NODE_ENV of ['development', 'test']) {
      const config = AppConfig.fromEnv(validateEnv({ NODE_ENV }));
      expect(config.auth).toEqual({
        mode: 'none',
        explicitlyOff: false,
        jwksUrl: undefined,
        issuer: undefined,
        audience: undefined,
        algorithms: ['RS256', 'ES256', 'EdDSA'],
        clockToleranceS: 30,
        jwksRefreshS: 600,
      });
      expect(config.metricsPort).toBe(9464);
    }
  });

  it('turns on with AUTH_JWKS_URL, and then needs the issuer and the audience', () => {
    expect(AppConfig.fromEnv(validateEnv(jwt)).auth.mode).toBe('jwt');
    expect(() => validateEnv({ AUTH_JWKS_URL: jwt.AUTH_JWKS_URL })).toThrow(
      'AUTH_ISSUER, AUTH_AUDIENCE must be set when AUTH_MODE=jwt',
    );
    expect(() => validateEnv({ AUTH_MODE: 'jwt' })).toThrow(/AUTH_JWKS_URL, AUTH_ISSUER/);
    // AUTH_MODE=none wins: it is the explicit way to turn authentication off.
    expect(AppConfig.fromEnv(validateEnv({ ...jwt, AUTH_MODE: 'none' })).auth.mode).toBe('none');
  });

  it('refuses production unless authentication is configured or explicitly waived', () => {
    expect(() => validateEnv(production)).toThrow(
      /AUTH_JWKS_URL is required when NODE_ENV=production.*AUTH_MODE=none/,
    );
    expect(() => validateEnv({ ...production, ...jwt })).not.toThrow();
    const waived = AppConfig.fromEnv(validateEnv({ ...production, AUTH_MODE: 'none' })).auth;
    expect([waived.mode, waived.explicitlyOff]).toEqual(['none', true]);
  });

  it.each(['none', 'HS256', 'RS256,HS512', 'hs384', 'RS256,', 'RS257'])(
    'refuses AUTH_ALGORITHMS=%s at boot',
    (value) => {
      expect(() => validateEnv({ AUTH_ALGORITHMS: value })).toThrow(
        /AUTH_ALGORITHMS must be a comma-separated list of .* \(never none or an HMAC algorithm/,
      );
    },
  );

  it('accepts a list of asymmetric algorithms, trimmed and without repeats', () => {
    const env = validateEnv({ AUTH_ALGORITHMS: ' ES384 , EdDSA,ES384,PS256' });
    expect(AppConfig.fromEnv(env).auth.algorithms).toEqual(['ES384', 'EdDSA', 'PS256']);
  });

  it('checks the JWKS URL, the tolerance, the refresh period and the metrics port', () => {
    let error: unknown;
    try {
      validateEnv({
        AUTH_JWKS_URL: 'ftp://idp/jwks',
        AUTH_CLOCK_TOLERANCE_S: '-1',
        AUTH_JWKS_REFRESH_S: '5',
        METRICS_PORT: '70000',
        AUTH_MODE: 'maybe',
      });
    } catch (caught) {
      error = caught;
    }
    const problems = (error as ConfigError).problems.join('\n');
    for (const name of [
      'AUTH_JWKS_URL',
      'AUTH_CLOCK_TOLERANCE_S',
      'AUTH_JWKS_REFRESH_S',
      'METRICS_PORT',
      'AUTH_MODE',
    ]) {
      expect(problems).toContain(name);
    }
  });
});

describe(parseByteSize.name, () => {
  it.each([
    ['100kb', 102_400],
    ['1mb', 1_048_576],
    ['2048', 2048],
    ['10B', 10],
  ])('%s is %d bytes', (value, bytes) => {
    expect(parseByteSize(value)).toBe(bytes);
  });
});
