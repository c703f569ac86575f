import { afterEach, describe, expect, it } from '@jest/globals';
import { createServer, type Server } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { once } from 'node:events';
import { boundIdleConnections } from './connection-bound.js';

/** A raw connection to `server`, resolved once the server has accepted it. */
async function connection(server: Server): Promise<Socket> {
  const accepted = once(server, 'connection');
  const socket = connect((server.address() as AddressInfo).port, '127.0.0.1');
  socket.setEncoding('utf8');
  await accepted;
  return socket;
}

/** Sends one keep-alive GET on `socket` and resolves with the status line of its answer. */
async function get(socket: Socket): Promise<string> {
  const answer = new Promise<string>((resolve) =>
    socket.once('data', (text: string) => resolve(text.split('\r\n')[0])),
  );
  socket.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n');
  return answer;
}

const closed = (socket: Socket) =>
  socket.closed ? Promise.resolve() : once(socket, 'close').then(() => undefined);

describe(boundIdleConnections.name, () => {
  let server: Server;
  const sockets: Socket[] = [];

  afterEach(async () => {
    for (const socket of sockets) socket.destroy();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  async function serve(max: number) {
    server = createServer((_, response) => response.end('ok'));
    const closedCount = boundIdleConnections(server, max);
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    return closedCount;
  }

  it('past the bound, closes the connection idle the longest between requests', async () => {
    const closedCount = await serve(2);
    const older = await connection(server);
    sockets.push(older);
    expect(await get(older)).toBe('HTTP/1.1 200 OK');
    const newer = await connection(server);
    sockets.push(newer);
    expect(await get(newer)).toBe('HTTP/1.1 200 OK');
    sockets.push(await connection(server));
    await closed(older);
    expect(newer.closed).toBe(false);
    expect(closedCount()).toBe(1);
  });

  it('never closes a new connection that has not sent its first request yet', async () => {
    const closedCount = await serve(1);
    // A probe's connection, accepted while its request is still on its way…
    const probe = await connection(server);
    sockets.push(probe);
    // …and more new connections past the bound behind it.
    for (let i = 0; i < 3; i++) sockets.push(await connection(server));
    expect(await get(probe)).toBe('HTTP/1.1 200 OK');
    expect(closedCount()).toBe(0);
  });
});
