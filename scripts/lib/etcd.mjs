// A single-member etcd for the failover test's Patroni cluster (Debian's etcd-server): client and
// peer URLs on free 127.0.0.1 ports, data in a temp directory, stopped by its PID.
import path from 'node:path';
import { freePorts } from './ports.mjs';
import { findTool, serviceTempDir, startListening } from './system-tools.mjs';

/**
 * @typedef {object} Etcd
 * @property {string} url http://127.0.0.1:PORT (client URL)
 * @property {number} port
 * @property {number | undefined} pid
 * @property {() => string} output
 * @property {() => Promise<void>} stop
 */

/** @param {number} ms */
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The etcd binary, or undefined when it is not installed.
 * @returns {string | undefined}
 */
export function etcdPath() {
  return findTool('etcd');
}

/**
 * Starts etcd on free 127.0.0.1 ports and waits until it reports itself healthy. Returns its
 * client `url`, `port`, PID, `output()` and `stop()` (stops it, removes its directory).
 * @param {{ name?: string }} [options]
 * @returns {Promise<Etcd>}
 */
export async function startEtcd({ name = 'etcd0' } = {}) {
  const binary = etcdPath();
  if (!binary) throw new Error('etcd is not installed (Debian: apt-get install etcd-server)');
  const [port, peerPort] = await freePorts(2);
  const { dir, remove } = await serviceTempDir('users-service-etcd-');
  const url = `http://127.0.0.1:${port}`;
  const peerUrl = `http://127.0.0.1:${peerPort}`;
  const daemon = await startListening(
    binary,
    [
      '--name',
      name,
      '--data-dir',
      path.join(dir, 'data'),
      '--listen-client-urls',
      url,
      '--advertise-client-urls',
      url,
      '--listen-peer-urls',
      peerUrl,
      '--initial-advertise-peer-urls',
      peerUrl,
      '--initial-cluster',
      `${name}=${peerUrl}`,
      '--initial-cluster-state',
      'new',
    ],
    { name: 'etcd', port, cleanup: remove },
  );
  // Listening comes before the member has elected itself: wait for /health.
  const deadline = Date.now() + 20_000;
  for (;;) {
    const healthy = await fetch(`${url}/health`, { signal: AbortSignal.timeout(1000) })
      .then((response) => response.json())
      .then((body) => /** @type {{ health?: string }} */ (body).health === 'true')
      .catch(() => false);
    if (healthy) break;
    if (!daemon.running() || Date.now() > deadline) {
      await daemon.stop('SIGKILL');
      await remove();
      throw new Error(`etcd not healthy on ${url}:\n${daemon.output()}`);
    }
    await sleep(50);
  }
  return {
    url,
    port,
    pid: daemon.pid,
    output: daemon.output,
    async stop() {
      await daemon.stop('SIGTERM');
      await remove();
    },
  };
}
