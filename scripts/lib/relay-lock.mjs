// The relay's single writer: a PostgreSQL session advisory lock, held on a connection of its own
// for as long as the relay publishes. Two relays publishing at once would each resume from the
// stream's last token and publish the same events twice, out of feed order between them; the
// second relay waits for the lock instead, and takes over when the first one's session ends (a
// stop, a crash, a lost connection: PostgreSQL releases the lock with the session).
import pg from 'pg';

/** 'users-service feed relay' as an int8 (the first 8 bytes of its SHA-256), like the migrations'. */
export const RELAY_LOCK_KEY = '-6340305293058662181';

/**
 * @typedef {object} RelayLock
 * @property {Promise<Error>} lost resolves when the lock's session ends: stop publishing at once
 * @property {() => Promise<void>} release ends the session, releasing the lock
 */

/**
 * Waits until this process holds the relay lock, trying every `retryMs`, on a connection to
 * `databaseUrl` (PostgreSQL itself: a session lock cannot go through PgBouncer in transaction
 * pooling). Resolves with the lock, or undefined when `signal` aborts first.
 * @param {string} databaseUrl
 * @param {AbortSignal} signal
 * @param {{ retryMs?: number; onWaiting?: () => void }} [options]
 * @returns {Promise<RelayLock | undefined>}
 */
export async function acquireRelayLock(databaseUrl, signal, { retryMs = 1000, onWaiting } = {}) {
  const client = new pg.Client({
    connectionString: databaseUrl,
    application_name: 'users-service-relay',
    keepAlive: true,
  });
  /** @type {(error: Error) => void} */
  let endSession = () => {};
  /** @type {Promise<Error>} */
  const lost = new Promise((resolve) => (endSession = resolve));
  client.on('error', endSession);
  client.on('end', () => endSession(new Error('the relay lock connection closed')));
  await client.connect();
  const release = () => client.end().catch(() => {});
  try {
    for (let first = true; ; first = false) {
      const { rows } = await client.query('SELECT pg_try_advisory_lock($1) AS held', [
        RELAY_LOCK_KEY,
      ]);
      if (rows[0].held) return { lost, release };
      if (first) onWaiting?.();
      const waited = await new Promise((resolve) => {
        const timer = setTimeout(() => resolve(true), retryMs);
        signal.addEventListener('abort', () => resolve(clearTimeout(timer) ?? false), {
          once: true,
        });
      });
      if (!waited || signal.aborted) {
        await release();
        return undefined;
      }
    }
  } catch (error) {
    await release();
    throw error;
  }
}
