// A spike of new connections waits in the kernel's accept queue, ahead of admission; a caller
// that gives up there closes its connection. Its request must not be served when the service
// finally reads it: past capacity nearly every open-loop request arrives this way, and serving
// the ones whose callers have left is what keeps a pod busy after the spike (docs/overload.md).
// The built service is stopped (SIGSTOP) while the connections are made, so both wait in its
// accept queue with their requests sent, one of them closed by its caller.
import net from 'node:net';
import pg from 'pg';
import {
  buildService,
  type ServiceProcess,
  startOnTestDatabase,
  waitFor,
} from '../support/service-process.js';
import { testDatabaseUrl } from '../support/test-database.js';

/** A raw POST /users on a new connection, sent once the connection is made. */
function createOn(port: number, name: string): { socket: net.Socket; sent: Promise<void> } {
  const body = JSON.stringify({ name });
  const request =
    `POST /users HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n` +
    `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
  const socket = net.connect(port, '127.0.0.1');
  const sent = new Promise<void>((resolve, reject) => {
    socket.once('error', reject);
    socket.once('connect', () => socket.write(request, () => resolve()));
  });
  return { socket, sent };
}

/** The first status line read on `socket`. */
function statusOf(socket: net.Socket): Promise<number> {
  return new Promise((resolve, reject) => {
    let text = '';
    socket.on('data', (chunk: Buffer) => {
      text += chunk.toString('latin1');
      const match = /^HTTP\/1\.1 (\d{3})/.exec(text);
      if (match) resolve(Number(match[1]));
    });
    socket.once('error', reject);
    socket.once('close', () => reject(new Error(`closed before an answer: ${text}`)));
  });
}

describe('a caller that left while its connection waited to be accepted (e2e: the built service)', () => {
  let db: pg.Client;
  let service: ServiceProcess | undefined;

  beforeAll(async () => {
    buildService();
    db = new pg.Client({ connectionString: testDatabaseUrl() });
    await db.connect();
    service = await startOnTestDatabase({ LOG_LEVEL: 'warn' });
  });
  afterAll(async () => {
    await service?.stop();
    await db.query('TRUNCATE users, posts, idempotency_keys RESTART IDENTITY CASCADE');
    await db.end();
  });

  const clientGone = async () => {
    const metrics = await (await fetch(service!.metricsUrl)).text();
    const line =
      /^overload_rejected_total\{transport="http",class="write",reason="client_gone"\} (\d+)$/m;
    return Number(line.exec(metrics)?.[1] ?? 0);
  };
  const usersNamed = async (name: string) =>
    (await db.query<{ n: number }>('SELECT count(*)::int AS n FROM users WHERE name = $1', [name]))
      .rows[0].n;

  it('is never served, and is counted as client_gone; a caller still waiting beside it is', async () => {
    const before = await clientGone();
    const { pid, port } = service!;
    process.kill(pid, 'SIGSTOP');
    let left: net.Socket | undefined;
    let stayed: net.Socket | undefined;
    try {
      // The kernel completes both handshakes and keeps both requests while the service sleeps.
      const leaving = createOn(port, 'Left before being accepted');
      const staying = createOn(port, 'Waited to be accepted');
      left = leaving.socket;
      stayed = staying.socket;
      await Promise.all([leaving.sent, staying.sent]);
      await new Promise<void>((resolve) => left!.end(resolve));
    } finally {
      process.kill(pid, 'SIGCONT');
    }
    expect(await statusOf(stayed)).toBe(201);
    await waitFor(
      'the request whose caller left to be counted',
      async () => (await clientGone()) === before + 1,
    );
    expect(await usersNamed('Left before being accepted')).toBe(0);
    expect(await usersNamed('Waited to be accepted')).toBe(1);
    stayed.destroy();
    left?.destroy();
  });
});
