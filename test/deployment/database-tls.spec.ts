// The prod overlay requires TLS to PostgreSQL with the server's certificate verified: the CA comes
// from the Secret users-service-db-ca, mounted in the service's pods and the migration Job's.
import path from 'node:path';
import { AppConfig } from '../../src/config/app-config.js';
import { validateEnv } from '../../src/config/env.validation.js';
import { poolOptions } from '../../src/database/database-options.js';
import { overlayCases, prod } from '../support/k8s-manifests.js';

const CA_SECRET = 'users-service-db-ca';

describe('database TLS in the manifests', () => {
  it('the prod overlay sets DB_REQUIRE_TLS and DB_CA_FILE', () => {
    expect(prod.cmData.DB_REQUIRE_TLS).toBe('true');
    expect(prod.cmData.DB_CA_FILE).toMatch(/^\/.+\.crt$/);
  });

  describe.each(overlayCases)('%s', (_, overlay) => {
    it.each([
      ['Deployment', overlay.podSpec],
      ['migration Job', overlay.jobPodSpec],
    ])('the %s mounts the CA Secret read-only where DB_CA_FILE points', (__, spec) => {
      const caFile = prod.cmData.DB_CA_FILE;
      const mount = spec.containers[0].volumeMounts?.find(
        (candidate) => candidate.mountPath === path.dirname(caFile),
      );
      expect(mount?.readOnly).toBe(true);
      const volume = spec.volumes?.find((candidate) => candidate.name === mount?.name);
      expect(volume?.secret?.secretName).toBe(CA_SECRET);
      expect(volume?.secret?.items).toEqual([
        { key: path.basename(caFile), path: path.basename(caFile) },
      ]);
    });
  });

  it('a prod pod without the Secret refuses to start, naming DB_CA_FILE', () => {
    const raw = {
      ...prod.cmData,
      DATABASE_URL: 'postgres://users_service_app:x@db.internal:5432/users',
      AUTH_MODE: 'none',
    };
    const env = validateEnv(raw);
    expect(() => poolOptions(AppConfig.fromEnv(env).database, { requireWritable: true })).toThrow(
      /^DB_CA_FILE: cannot read \/.+ \(ENOENT\)$/,
    );
    expect(() => validateEnv({ ...raw, DB_CA_FILE: '' })).toThrow(
      /DB_CA_FILE is required when DB_REQUIRE_TLS=true/,
    );
  });
});
