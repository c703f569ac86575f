// Loopback ports for the tooling (tests, the benchmark, the soak run, the interop check): every
// server they start listens on 127.0.0.1 on a port picked here, never on a fixed one.
import net from 'node:net';

/** @import { AddressInfo } from 'node:net' */

/**
 * Free ports on 127.0.0.1, all distinct (held open together while being picked).
 * @param {number} count
 * @returns {Promise<number[]>}
 */
export async function freePorts(count) {
  const servers = Array.from({ length: count }, () => net.createServer());
  await Promise.all(
    servers.map(
      (server) =>
        /** @type {Promise<void>} */ (
          new Promise((resolve, reject) =>
            server.listen(0, '127.0.0.1', resolve).on('error', reject),
          )
        ),
    ),
  );
  const ports = servers.map((server) => /** @type {AddressInfo} */ (server.address()).port);
  await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
  return ports;
}

/**
 * One free port on 127.0.0.1.
 * @returns {Promise<number>}
 */
export async function freePort() {
  return (await freePorts(1))[0];
}

/**
 * True when nothing accepts TCP connections on 127.0.0.1:port any more.
 * @param {number | string} port
 * @returns {Promise<boolean>}
 */
export function refusesConnections(port) {
  return new Promise((resolve) => {
    const socket = net.connect(Number(port), '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', () => resolve(true));
  });
}
