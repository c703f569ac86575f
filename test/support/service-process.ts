// The built service as the e2e specs run it (scripts/lib/service-process.mjs, shared with the
// benchmark and the soak run): NODE_ENV=test and info logs unless a spec says otherwise, and the
// whole output kept, because specs assert on it.
import { startService as start, type ServiceProcess } from '../../scripts/lib/service-process.mjs';

export {
  buildService,
  type ServiceProcess,
  waitFor,
  waitUntilReady,
} from '../../scripts/lib/service-process.mjs';

export function startService(env: Record<string, string>): Promise<ServiceProcess> {
  return start({ env: { NODE_ENV: 'test', LOG_LEVEL: 'info', ...env } });
}
