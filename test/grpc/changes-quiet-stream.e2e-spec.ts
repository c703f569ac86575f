// A WatchUserChanges stream quiet for 60 s behind a proxy that closes connections idle for 8 s (as
// a mesh proxy or a load balancer does): the heartbeats keep it open, and the first change after
// the silence arrives on it.
import net from 'node:net';
import {
  grpcClients,
  watchUserChanges,
  type WatchUserChangesResponse,
} from '../../scripts/lib/grpc-client.mjs';
import { TcpProxy } from '../support/tcp-proxy.js';
import { createTestApp, resetDatabase, type TestApp } from '../support/test-app.js';

const isHeartbeat = (message: WatchUserChangesResponse) => message.content === 'heartbeat';
const versionOf = (message: WatchUserChangesResponse) => [
  message.event?.data.id,
  message.event?.data.version,
];

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

  it('keeps a stream open through 60 s of silence behind a proxy that closes idle connections', async () => {
    const proxy = new TcpProxy('127.0.0.1', Number(t.grpcAddress.split(':')[1]), {
      idleTimeoutMs: 8000,
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
      while (Date.now() - opened < 60_000) {
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
  }, 90_000);
});
