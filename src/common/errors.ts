/**
 * Transport-neutral errors thrown by services. The HTTP filter maps them to 404/409/400 and the
 * gRPC filter to NOT_FOUND/ALREADY_EXISTS/INVALID_ARGUMENT, so services never import HTTP types.
 */
export class NotFoundError extends Error {
  override readonly name = 'NotFoundError';
}

export class ConflictError extends Error {
  override readonly name = 'ConflictError';
}

export class InvalidArgumentError extends Error {
  override readonly name = 'InvalidArgumentError';
}
