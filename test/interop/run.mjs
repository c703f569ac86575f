// CI check: the built service answers an independent, C-core gRPC client (Python grpcio) whose
// stubs are generated from proto/users.proto alone. Needs DATABASE_URL and python3 with grpcio and
// grpc_tools (.ci/run installs Debian's python3-grpcio and python3-grpc-tools).
import { execFileSync, spawn } from 'node:child_process';
import path from 'node:path';
import { freePorts } from '../../scripts/lib/embedded-pg.mjs';

const root = path.resolve(import.meta.dirname, '..', '..');
const databaseUrl = process.env.DATABASE_URL;
if (!databaseUrl) throw new Error('DATABASE_URL is required');

const [port, grpcPort] = await freePorts(2);
const service = spawn(process.execPath, [path.join(root, 'dist', 'src', 'main.js')], {
  cwd: root,
  env: {
    PATH: process.env.PATH,
    DATABASE_URL: databaseUrl,
    MIGRATE_ON_BOOT: 'true',
    HOST: '127.0.0.1',
    PORT: String(port),
    GRPC_PORT: String(grpcPort),
    LOG_LEVEL: 'warn',
    SHUTDOWN_DRAIN_MS: '0',
  },
  stdio: ['ignore', 'inherit', 'inherit'],
});
const base = `http://127.0.0.1:${port}`;
try {
  const deadline = Date.now() + 30_000;
  while (
    !(await fetch(`${base}/health/ready`).then(
      (r) => r.ok,
      () => false,
    ))
  ) {
    if (Date.now() > deadline) throw new Error('the service did not become ready');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const name = `Interop ${Date.now()}`;
  const created = await fetch(`${base}/users`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ name }),
  });
  if (created.status !== 201) throw new Error(`POST /users answered ${created.status}`);
  const { id } = await created.json();
  execFileSync(
    '/usr/bin/python3',
    [
      path.join(root, 'test', 'interop', 'grpc_client.py'),
      `127.0.0.1:${grpcPort}`,
      String(id),
      name,
    ],
    {
      stdio: 'inherit',
    },
  );
  await fetch(`${base}/users/${id}`, { method: 'DELETE' });
  console.log('gRPC interop with an independent client: passed');
} finally {
  service.kill('SIGTERM');
}
