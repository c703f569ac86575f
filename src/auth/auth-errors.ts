import { status } from '@grpc/grpc-js';
import type { Scope } from './scopes.js';

/**
 * Why a request was refused: the label of auth_rejections_total and a sentence for the caller.
 * The sentences say what to fix without echoing the token.
 */
export const REJECTIONS = {
  missing: 'a bearer token is required: send Authorization: Bearer <token>',
  malformed: 'the Authorization header must be "Bearer <token>"',
  duplicate: 'send exactly one Authorization header',
  algorithm: 'the bearer token is signed with an algorithm this service does not accept',
  unknown_key: 'the bearer token is signed with a key this service does not know',
  signature: 'the bearer token signature is invalid',
  expired: 'the bearer token has expired',
  not_yet_valid: 'the bearer token is not valid yet',
  issuer: 'the bearer token was issued by an issuer this service does not trust',
  audience: 'the bearer token is not meant for this service (audience)',
  claims: 'the bearer token lacks a required claim or has an invalid one',
  invalid: 'the bearer token is invalid',
  insufficient_scope: 'the bearer token lacks the scope this operation needs',
  keys_unavailable: 'the token signing keys are not available yet',
} as const;

export type RejectionReason = keyof typeof REJECTIONS;

/** A token (or its absence) that does not authenticate the caller: 401 / UNAUTHENTICATED. */
export class AuthenticationError extends Error {
  constructor(
    readonly reason: RejectionReason,
    /** False when no credentials were sent at all (the 401 then carries no `error=`). */
    readonly tokenSent = true,
  ) {
    super(REJECTIONS[reason]);
    this.name = 'AuthenticationError';
  }
}

/** A valid token without the scope the operation needs: 403 / PERMISSION_DENIED. */
export class InsufficientScopeError extends Error {
  readonly reason = 'insufficient_scope';
  constructor(readonly scope: Scope) {
    super(`the bearer token lacks the scope ${scope} this operation needs`);
    this.name = 'InsufficientScopeError';
  }
}

/** No key set has been fetched yet (the instance is not ready): 503 / UNAVAILABLE. */
export class KeysUnavailableError extends Error {
  readonly reason = 'keys_unavailable';
  constructor() {
    super('the token signing keys are not available yet');
    this.name = 'KeysUnavailableError';
  }
}

/** A refusal as each transport answers it. */
export interface Refusal {
  reason: RejectionReason;
  message: string;
  httpStatus: 401 | 403 | 503;
  grpcCode: status;
  /** The HTTP WWW-Authenticate challenge (RFC 6750), if the status carries one. */
  challenge?: string;
}

/**
 * Every refusal of the guards, on both transports: a token missing or invalid (401,
 * UNAUTHENTICATED), a scope missing (403, PERMISSION_DENIED), the signing keys not fetched yet
 * (503, UNAVAILABLE: the instance is not ready, the caller did nothing wrong). Undefined for
 * anything else, which the guard lets through as it is.
 */
export function refusalOf(error: unknown): Refusal | undefined {
  if (error instanceof KeysUnavailableError) {
    return {
      reason: error.reason,
      message: error.message,
      httpStatus: 503,
      grpcCode: status.UNAVAILABLE,
    };
  }
  if (error instanceof InsufficientScopeError) {
    return {
      reason: error.reason,
      message: error.message,
      httpStatus: 403,
      grpcCode: status.PERMISSION_DENIED,
      challenge: `Bearer error="insufficient_scope", scope="${error.scope}"`,
    };
  }
  if (error instanceof AuthenticationError) {
    return {
      reason: error.reason,
      message: error.message,
      httpStatus: 401,
      grpcCode: status.UNAUTHENTICATED,
      challenge: error.tokenSent
        ? 'Bearer realm="users", error="invalid_token"'
        : 'Bearer realm="users"',
    };
  }
  return undefined;
}
