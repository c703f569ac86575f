// The built service as the e2e specs run it (scripts/lib/service-process.mjs, shared with the
// benchmark and the soak run): NODE_ENV=test and info logs unless a spec says otherwise, and the
// whole output kept, because specs assert on it.
import {
  startService as start,
  type ServiceProcess,
  waitUntilReady,
} from '../../scripts/lib/service-process.mjs';
import { testDatabaseUrl } from './test-database.js';

export {
  buildService,
  type ServiceProcess,
  waitFor,
  waitUntilReady,
} from '../../scripts/lib/service-process.mjs';

export function startService(env: Record<string, string>): Promise<ServiceProcess> {
  return start({ env: { NODE_ENV: 'test', LOG_LEVEL: 'info', ...env } });
}

/** startService, once the service answers ready; stopped again when it never does. */
export async function startReadyService(
  env: Record<string, string>,
  { timeoutMs }: { timeoutMs?: number } = {},
): Promise<ServiceProcess> {
  const service = await startService(env);
  try {
    await waitUntilReady(service, { timeoutMs });
  } catch (error) {
    await service.stop();
    throw error;
  }
  return service;
}

/** startReadyService on the test database, migrated at boot; `env` adds to that or overrides it. */
export function startOnTestDatabase(
  env: Record<string, string> = {},
  options: { timeoutMs?: number } = {},
): Promise<ServiceProcess> {
  return startReadyService(
    { DATABASE_URL: testDatabaseUrl(), MIGRATE_ON_BOOT: 'true', ...env },
    options,
  );
}
