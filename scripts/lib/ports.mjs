// Loopback ports for the tooling (tests, the benchmark, the soak run, the interop check): every
// server they start listens on 127.0.0.1 on a port picked here, never on a fixed one.
import { readFileSync } from 'node:fs';
import net from 'node:net';

/** @import { AddressInfo } from 'node:net' */

/**
 * The lowest port of the kernel's ephemeral range, from which it takes the local port of every
 * outgoing connection and of every listen on port 0; undefined where it cannot be read.
 * @returns {number | undefined}
 */
function ephemeralFloor() {
  try {
    const [low] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8')
      .trim()
      .split(/\s+/)
      .map(Number);
    return low > 0 ? low : undefined;
  } catch {
    return undefined;
  }
}

/** Picked ports start here: above the well-known and common service ports. */
const LOWEST = 10_000;
const ATTEMPTS = 100;

/**
 * A server listening on 127.0.0.1:port, or undefined when the port is taken.
 * @param {number} port
 * @returns {Promise<net.Server | undefined>}
 */
function listenOn(port) {
  const server = net.createServer();
  return new Promise((resolve, reject) => {
    server.once('error', (error) =>
      /** @type {NodeJS.ErrnoException} */ (error).code === 'EADDRINUSE'
        ? resolve(undefined)
        : reject(error),
    );
    server.listen(port, '127.0.0.1', () => resolve(server));
  });
}

/**
 * Free ports on 127.0.0.1, all distinct (held open together while being picked). Picked at random
 * below the kernel's ephemeral range when there is room (Linux: 10000–32767), so that no outgoing
 * connection of this or any other process takes one between its pick and its use (a port from a
 * listen on port 0 is an ephemeral one, and was seen taken in that gap: EADDRINUSE at boot).
 * Elsewhere, ports from a listen on port 0.
 * @param {number} count
 * @returns {Promise<number[]>}
 */
export async function freePorts(count) {
  const floor = ephemeralFloor();
  const span = floor ? floor - LOWEST : 0;
  /** @type {net.Server[]} */
  const servers = [];
  try {
    for (let attempt = 0; servers.length < count; attempt++) {
      const port =
        span >= 1000 && attempt < ATTEMPTS ? LOWEST + Math.floor(Math.random() * span) : 0;
      const server = await listenOn(port);
      if (server) servers.push(server);
      else if (port === 0) throw new Error('no free port on 127.0.0.1');
    }
    return servers.map((server) => /** @type {AddressInfo} */ (server.address()).port);
  } finally {
    await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
  }
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
