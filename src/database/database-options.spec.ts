import { poolOptions } from './database-options.js';

describe(poolOptions.name, () => {
  const settings = {
    connectTimeoutMs: 2000,
    statementTimeoutMs: 5000,
    keepAliveIdleS: 5,
    maxLifetimeS: 300,
  };

  it('turns on TCP keepalives and the maximum connection lifetime for pg', () => {
    expect(poolOptions(settings, { requireWritable: true })).toEqual(
      expect.objectContaining({
        keepAlive: true,
        keepAliveInitialDelayMillis: 5000,
        maxLifetimeSeconds: 300,
      }),
    );
    expect(
      poolOptions({ ...settings, keepAliveIdleS: 0, maxLifetimeS: 0 }, { requireWritable: true }),
    ).toEqual(expect.objectContaining({ keepAlive: false, maxLifetimeSeconds: 0 }));
  });

  it('gives each pool a Client class with a connection gate of its own', () => {
    const primary = poolOptions(settings, { requireWritable: true }).Client;
    const replica = poolOptions(settings, { requireWritable: false }).Client;
    expect(primary.gate).toBeDefined();
    expect(primary.gate).not.toBe(replica.gate);
  });
});
