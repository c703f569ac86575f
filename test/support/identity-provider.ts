// The stand-in identity provider shared with the benchmark (scripts/lib/identity-provider.mjs),
// plus a bounded poll for the specs.
export * from '../../scripts/lib/identity-provider.mjs';

/** Polls `check` (bounded in time) until it holds. */
export async function eventually(
  what: string,
  check: () => boolean | Promise<boolean>,
  timeoutMs = 10_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (
    !(await Promise.resolve()
      .then(check)
      .catch(() => false))
  ) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
