// CI check: the built service answers an independent, C-core gRPC client (Python grpcio) whose
// stubs are generated from proto/users.proto alone. Needs DATABASE_URL and python3 with grpcio and
// grpc_tools (.ci/run installs Debian's python3-grpcio and python3-grpc-tools).
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { requestJson } from '../../scripts/lib/http-client.mjs';
import { outputTail, startService, waitUntilReady } from '../../scripts/lib/service-process.mjs';

const root = path.resolve(import.meta.dirname, '..', '..');
const databaseUrl = process.env.DATABASE_URL;
if (!databaseUrl) throw new Error('DATABASE_URL is required');

const service = await startService({
  env: {
    DATABASE_URL: databaseUrl,
    MIGRATE_ON_BOOT: 'true',
    LOG_LEVEL: 'warn',
    SHUTDOWN_DRAIN_MS: '0',
  },
  keepChars: 64 * 1024,
});
try {
  await waitUntilReady(service, { timeoutMs: 30_000 });
  const name = `Interop ${Date.now()}`;
  const created = await requestJson(service.url, 'POST', '/users', { name });
  if (created.status !== 201) throw new Error(`POST /users answered ${created.status}`);
  const { id } = created.body;
  execFileSync(
    '/usr/bin/python3',
    [path.join(root, 'test', 'interop', 'grpc_client.py'), service.grpcAddress, String(id), name],
    { stdio: 'inherit' },
  );
  await requestJson(service.url, 'DELETE', `/users/${id}`);
  console.log('gRPC interop with an independent client: passed');
} catch (error) {
  console.error(`service output:\n${outputTail(service)}`);
  throw error;
} finally {
  await service.stop();
}
