import type { CryptoKey, JWK, JWTPayload } from 'jose';

export const ISSUER: string;
export const AUDIENCE: string;
export type Algorithm = 'RS256' | 'ES256' | 'EdDSA';
export const ALGORITHMS: readonly Algorithm[];

export interface SigningKey {
  kid: string;
  alg: Algorithm;
  privateKey: CryptoKey;
  publicJwk: JWK;
}

export interface MintOptions {
  /** Seconds from now; `null` leaves exp out. Default 300. */
  expiresIn?: number | null;
  notBeforeIn?: number;
  issuer?: string;
  audience?: string | string[];
  /** Replaces the protected header's kid. */
  kid?: string;
}

export function signingKey(alg: Algorithm, kid?: string): Promise<SigningKey>;
export function mint(key: SigningKey, claims?: JWTPayload, options?: MintOptions): Promise<string>;

export class JwksServer {
  keys: SigningKey[];
  down: boolean;
  fetches: number;
  constructor(keys?: SigningKey[]);
  readonly url: string;
  start(): Promise<this>;
  stop(): Promise<void>;
}

export function authEnv(jwks: JwksServer, extra?: Record<string, string>): Record<string, string>;
