/**
 * Transport-neutral errors thrown by services and repositories, and the one table that says what
 * each one is on every transport. The HTTP exception filter, the gRPC exception filter and the
 * OpenAPI error examples all read ERROR_KINDS, so a new kind of error is one class and one row.
 */
export class NotFoundError extends Error {
  override readonly name = 'NotFoundError';
}

export class ConflictError extends Error {
  override readonly name = 'ConflictError';
}

/** A conditional write whose precondition (If-Match) no longer holds: nothing was changed. */
export class PreconditionFailedError extends Error {
  override readonly name = 'PreconditionFailedError';
}

export class InvalidArgumentError extends Error {
  override readonly name = 'InvalidArgumentError';
}

/** What a client asks for was there once and is gone for good (a change token past retention). */
export class GoneError extends Error {
  override readonly name = 'GoneError';
}

/**
 * The standard gRPC status codes the table uses (grpc/status.proto), as numbers: this folder knows
 * no transport library.
 */
export const GrpcCode = {
  INVALID_ARGUMENT: 3,
  NOT_FOUND: 5,
  ALREADY_EXISTS: 6,
  FAILED_PRECONDITION: 9,
} as const;

export interface ErrorKind {
  type: abstract new (...args: never[]) => Error;
  httpStatus: number;
  grpcCode: number;
  /** A message the service really sends for this kind, for the API documentation. */
  example: string;
}

/** Error class → HTTP status, gRPC code, documented example. The message is always the error's. */
export const ERROR_KINDS: readonly ErrorKind[] = [
  {
    type: InvalidArgumentError,
    httpStatus: 400,
    grpcCode: GrpcCode.INVALID_ARGUMENT,
    example: 'id must be a positive 32-bit integer',
  },
  {
    type: NotFoundError,
    httpStatus: 404,
    grpcCode: GrpcCode.NOT_FOUND,
    example: 'user 42 not found',
  },
  {
    type: ConflictError,
    httpStatus: 409,
    grpcCode: GrpcCode.ALREADY_EXISTS,
    example: 'email ada@example.com is already used by another user',
  },
  {
    type: PreconditionFailedError,
    httpStatus: 412,
    grpcCode: GrpcCode.FAILED_PRECONDITION,
    example: 'user 7 has changed: If-Match matches no current ETag',
  },
  {
    type: GoneError,
    httpStatus: 410,
    grpcCode: GrpcCode.FAILED_PRECONDITION,
    example:
      'the change token has expired: changes after it were purged (kept 168 hours); list the users again and follow the feed from their Changes-Token',
  },
];

/** The row of the table for this error, or undefined when it is not one of the service's own. */
export function errorKindOf(error: unknown): ErrorKind | undefined {
  return ERROR_KINDS.find(({ type }) => error instanceof type);
}
