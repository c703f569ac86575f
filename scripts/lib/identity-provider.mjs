// A stand-in OAuth 2.0 identity provider for the tests and the benchmark: signing keys generated
// by jose (RS256, ES256, Ed25519), their public halves served as a JWKS on 127.0.0.1, and tokens
// minted with them. The JWKS server can be taken down and brought back, and counts its fetches.
import { createServer } from 'node:http';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';

/**
 * @import { CryptoKey, JWK, JWTPayload } from 'jose'
 * @import { Server } from 'node:http'
 * @import { AddressInfo } from 'node:net'
 * @typedef {'RS256' | 'ES256' | 'EdDSA'} Algorithm
 * @typedef {object} SigningKey
 * @property {string} kid
 * @property {Algorithm} alg
 * @property {CryptoKey} privateKey
 * @property {JWK} publicJwk
 * @typedef {object} MintOptions
 * @property {number | null} [expiresIn] Seconds from now; `null` leaves exp out. Default 300.
 * @property {number} [notBeforeIn]
 * @property {string} [issuer]
 * @property {string | string[]} [audience]
 * @property {string} [kid] Replaces the protected header's kid.
 */

export const ISSUER = 'https://idp.test/realms/users';
export const AUDIENCE = 'users-service';
/** @type {readonly Algorithm[]} */
export const ALGORITHMS = ['RS256', 'ES256', 'EdDSA'];

let nextKid = 1;

/**
 * A fresh key pair for `alg`, with its public JWK (kid, alg, use) as a JWKS lists it.
 * @param {Algorithm} alg
 * @param {string} [kid]
 * @returns {Promise<SigningKey>}
 */
export async function signingKey(alg, kid = `key-${nextKid++}`) {
  const { privateKey, publicKey } = await generateKeyPair(alg, {
    extractable: true,
    ...(alg === 'EdDSA' && { crv: 'Ed25519' }),
  });
  const publicJwk = { ...(await exportJWK(publicKey)), kid, alg, use: 'sig' };
  return { kid, alg, privateKey, publicJwk };
}

/**
 * A JWT signed by `key` with the standard claims of a token for this service (sub, iss, aud, iat,
 * exp in 300 s), plus `claims`. Options: expiresIn (s, null for no exp), notBeforeIn (s), issuer,
 * audience, kid (replaces the header's).
 * @param {SigningKey} key
 * @param {JWTPayload} [claims]
 * @param {MintOptions} [options]
 * @returns {Promise<string>}
 */
export function mint(key, claims = {}, options = {}) {
  const now = Math.floor(Date.now() / 1000);
  const jwt = new SignJWT({ sub: 'user-1', ...claims })
    .setProtectedHeader({ alg: key.alg, kid: options.kid ?? key.kid, typ: 'JWT' })
    .setIssuer(options.issuer ?? ISSUER)
    .setAudience(options.audience ?? AUDIENCE)
    .setIssuedAt(now);
  const expiresIn = options.expiresIn === undefined ? 300 : options.expiresIn;
  if (expiresIn !== null) jwt.setExpirationTime(now + expiresIn);
  if (options.notBeforeIn !== undefined) jwt.setNotBefore(now + options.notBeforeIn);
  return jwt.sign(key.privateKey);
}

/** Serves `{"keys": [...]}` at /jwks on 127.0.0.1 (a free port); 503 while `down`. */
export class JwksServer {
  /** @type {SigningKey[]} */
  keys;
  down = false;
  fetches = 0;
  /** @type {Server | undefined} */
  #server;

  /** @param {SigningKey[]} [keys] */
  constructor(keys = []) {
    this.keys = keys;
  }

  /** @returns {string} */
  get url() {
    const address = /** @type {AddressInfo} */ (this.#server?.address());
    return `http://127.0.0.1:${address.port}/jwks`;
  }

  /** @returns {Promise<this>} */
  async start() {
    const server = createServer((request, response) => {
      this.fetches++;
      if (this.down || request.url !== '/jwks') {
        response.writeHead(this.down ? 503 : 404).end();
        return;
      }
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ keys: this.keys.map((key) => key.publicJwk) }));
    });
    this.#server = server;
    await new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(undefined)));
    return this;
  }

  /** @returns {Promise<void>} */
  async stop() {
    const server = this.#server;
    if (!server) return;
    server.closeAllConnections();
    await new Promise((resolve) => server.close(() => resolve(undefined)));
  }
}

/**
 * The AUTH_* environment of a service trusting `jwks`.
 * @param {JwksServer} jwks
 * @param {Record<string, string>} [extra]
 * @returns {Record<string, string>}
 */
export function authEnv(jwks, extra = {}) {
  return {
    AUTH_MODE: 'jwt',
    AUTH_JWKS_URL: jwks.url,
    AUTH_ISSUER: ISSUER,
    AUTH_AUDIENCE: AUDIENCE,
    ...extra,
  };
}
