// Clean-up for the long-running .mjs tools (the benchmark, the soak run): whatever they started
// is stopped once, in reverse order, on success, on error and on the given signals.

/** @param {number} ms */
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Returns `cleanups` (push a task per thing started) and `cleanup()` (runs them once, newest
 * first, each bounded to 15 s). On each of `signals`, logs, cleans up and exits with its code.
 * @param {{
 *   what: string;
 *   log: (...message: unknown[]) => void;
 *   signals?: [NodeJS.Signals, number][];
 * }} options
 * @returns {{ cleanups: (() => Promise<unknown>)[]; cleanup: () => Promise<void> }}
 */
export function cleanupOnExit({
  what,
  log,
  signals = [
    ['SIGINT', 130],
    ['SIGTERM', 143],
  ],
}) {
  /** @type {(() => Promise<unknown>)[]} */
  const cleanups = [];
  /** @type {Promise<void> | undefined} */
  let cleaning;
  const cleanup = () =>
    (cleaning ??= (async () => {
      for (const task of cleanups.reverse()) {
        await Promise.race([task(), sleep(15_000)]).catch((error) => log('clean-up:', error));
      }
    })());
  for (const [signal, code] of signals) {
    process.on(signal, () => {
      log(`\n${signal}: stopping everything ${what} started`);
      cleanup().finally(() => process.exit(code));
    });
  }
  return { cleanups, cleanup };
}
