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
