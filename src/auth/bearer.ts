import { AuthenticationError } from './auth-errors.js';

/** RFC 6750 §2.1: `Bearer` (any case), one or more spaces, a token68. */
const BEARER = /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i;

/**
 * The token of the Authorization header values a request carried (all of them: HTTP raw
 * headers or gRPC metadata), or an AuthenticationError saying what is wrong with them.
 * Only the header is parsed here; the token itself is left to jose.
 */
export function bearerToken(values: readonly string[]): string {
  if (values.length === 0) throw new AuthenticationError('missing', false);
  // Two headers are ambiguous: a proxy may have checked one and the service the other.
  if (values.length > 1) throw new AuthenticationError('duplicate');
  const match = BEARER.exec(values[0]);
  if (!match) throw new AuthenticationError('malformed');
  return match[1];
}

/** Every Authorization value in Node's raw header list (Node keeps only the first otherwise). */
export function authorizationValues(rawHeaders: readonly string[]): string[] {
  const values: string[] = [];
  for (let i = 0; i < rawHeaders.length; i += 2) {
    if (rawHeaders[i].length === 13 && rawHeaders[i].toLowerCase() === 'authorization') {
      values.push(rawHeaders[i + 1]);
    }
  }
  return values;
}
