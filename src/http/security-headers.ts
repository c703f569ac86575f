import type { IncomingMessage, ServerResponse } from 'node:http';
import helmet from 'helmet';

/** A response header: name and value. */
export type Header = readonly [name: string, value: string];

/**
 * The security headers of helmet's defaults (Content-Security-Policy, Strict-Transport-Security,
 * X-Frame-Options, X-Content-Type-Options and the rest), worked out once at startup by running
 * helmet against a recording response. None of them depends on the request (the defaults have no
 * CSP nonce), so every response gets the same list, which costs a fraction of helmet's chain of a
 * dozen middlewares per request; helmet stays the one source of the values. Options that compute
 * a header per request (a function in a CSP directive) would need helmet mounted as a middleware.
 */
export function securityHeaders(): readonly Header[] {
  const headers = new Map<string, string>();
  const recorder = {
    setHeader(name: string, value: unknown) {
      headers.set(name, String(value));
    },
    // helmet removes X-Powered-By, which the app never sets (express.disable('x-powered-by')).
    removeHeader() {},
  };
  let outcome: unknown = new Error('helmet did not finish synchronously');
  helmet()({} as IncomingMessage, recorder as unknown as ServerResponse, (error) => {
    outcome = error;
  });
  if (outcome !== undefined)
    throw new Error('helmet refused its default options', { cause: outcome });
  return [...headers];
}
