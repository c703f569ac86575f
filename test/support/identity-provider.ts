// The stand-in identity provider shared with the benchmark (scripts/lib/identity-provider.mjs),
// plus a bounded poll for the specs.
import type { Logger } from 'pino';
import {
  authEnv,
  JwksServer,
  signingKey,
  type SigningKey,
} from '../../scripts/lib/identity-provider.mjs';
import { createTestApp, type TestApp } from './test-app.js';

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

export interface AuthApp {
  /** The key the JWKS server publishes and tokens are minted with. */
  key: SigningKey;
  jwks: JwksServer;
  t: TestApp;
  close(): Promise<void>;
}

/**
 * The app with authentication on, trusting a JWKS server of the test's own that publishes one
 * `algorithm` key: started, and ready (its first key fetch done).
 */
export async function startAuthApp(
  algorithm: Parameters<typeof signingKey>[0],
  options: { grpc?: boolean; logger?: Logger; env?: Record<string, string> } = {},
): Promise<AuthApp> {
  const key = await signingKey(algorithm);
  const jwks = await new JwksServer([key]).start();
  const t = await createTestApp({ ...options, env: { ...authEnv(jwks), ...options.env } });
  await eventually('readiness', async () => (await t.http().get('/health/ready')).status === 200);
  return {
    key,
    jwks,
    t,
    async close() {
      await t.close();
      await jwks.stop();
    },
  };
}
