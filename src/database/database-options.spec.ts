import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
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

  describe('with DB_CA_FILE', () => {
    const pem = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';
    let dir: string;

    beforeAll(() => {
      dir = mkdtempSync(path.join(os.tmpdir(), 'database-options-'));
      writeFileSync(path.join(dir, 'ca.crt'), pem);
      writeFileSync(path.join(dir, 'not-a-ca'), 'hello');
    });
    afterAll(() => rmSync(dir, { recursive: true, force: true }));

    const withCa = (caFile: string) =>
      poolOptions({ ...settings, caFile }, { requireWritable: true });

    it('verifies the server against the CA (verify-full: Node checks the chain and the host)', () => {
      expect(withCa(path.join(dir, 'ca.crt')).ssl).toEqual({ ca: pem });
      expect(poolOptions(settings, { requireWritable: true }).ssl).toBeUndefined();
    });

    it('refuses a CA file it cannot read, or that holds no certificate, naming DB_CA_FILE', () => {
      expect(() => withCa(path.join(dir, 'missing.crt'))).toThrow(
        /^DB_CA_FILE: cannot read .*missing\.crt \(ENOENT\)$/,
      );
      expect(() => withCa(path.join(dir, 'not-a-ca'))).toThrow(
        /^DB_CA_FILE: .*not-a-ca holds no PEM certificate$/,
      );
    });
  });
});
