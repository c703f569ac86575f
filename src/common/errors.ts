/**
 * Transport-neutral errors thrown by services. The HTTP filter maps them to 404/409/400 and the
 * gRPC filter to NOT_FOUND/ALREADY_EXISTS/FAILED_PRECONDITION/INVALID_ARGUMENT, so services never import HTTP types.
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
