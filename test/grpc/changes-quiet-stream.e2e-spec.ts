// A WatchUserChanges stream quiet for 60 s (CHANGES_QUIET_S, at least 20) behind a proxy that
// closes connections idle for 8 s (as a mesh proxy or a load balancer does): the heartbeats keep
// it open, and the first change after the silence arrives on it.
import net from 'node:net';
import { grpcClients, watchUserChanges } from '../../scripts/lib/grpc-client.mjs';
import { TcpProxy } from '../support/tcp-proxy.js';
import { isHeartbeat, versionOf } from '../support/changes-feed.js';
import { createTestApp, resetDatabase, type TestApp } from '../support/test-app.js';

/** How long the stream stays quiet: 60 s, or CHANGES_QUIET_S (never under 20, 2.5 idle timeouts). */
const QUIET_S = Math.max(20, Number(process.env.CHANGES_QUIET_S ?? 60));
const IDLE_TIMEOUT_MS = 8000;

describe('gRPC change feed: a quiet stream (e2e)', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp({ grpc: true });
  });
  afterAll(async () => {
    await resetDatabase(t.dataSource);
    await t?.close();
  });

  const sql = (text: string) => t.dataSource.query(text);

  it(
    `keeps a stream open through ${QUIET_S} s of silence behind a proxy that closes idle connections`,
    async () => {
      const proxy = new TcpProxy('127.0.0.1', Number(t.grpcAddress.split(':')[1]), {
        idleTimeoutMs: IDLE_TIMEOUT_MS,
      });
      await proxy.start();
      const viaProxy = grpcClients(`127.0.0.1:${proxy.port}`);
      // A second connection through the same proxy that carries nothing: the proxy closes it.
      const idle = net.connect(proxy.port, '127.0.0.1');
      // Read (the server's HTTP/2 settings), or the end would wait behind the unread bytes.
      idle.resume();
      const idleClosed = new Promise((resolve) => idle.once('close', resolve));
      try {
        const watch = watchUserChanges(viaProxy.users);
        const opened = Date.now();
        while (Date.now() - opened < QUIET_S * 1000) {
          expect(isHeartbeat(await watch.next(10_000))).toBe(true);
        }
        await idleClosed;
        expect(proxy.idleClosed).toBe(1);
        await sql(`INSERT INTO users (name) VALUES ('after the silence')`);
        expect(versionOf(await watch.next())).toEqual([1, 1]);
        watch.cancel();
      } finally {
        idle.destroy();
        viaProxy.close();
        await proxy.cut();
      }
    },
    (QUIET_S + 30) * 1000,
  );
});
