/** Error bodies docs/api.md fixes word for word. */
export const INVALID_ID = { error: 'id must be a positive 32-bit integer' };
export const INVALID_API_KEY = { error: 'invalid or missing API key' };
export const INTERNAL_ERROR = { error: 'internal server error' };
export const SERVICE_UNAVAILABLE = { error: 'service unavailable' };
export const INVALID_JSON = { error: 'request body is not valid JSON' };
export const NOT_JSON = { error: 'request body must be JSON (Content-Type: application/json)' };
export const KEY_IN_PROGRESS = {
  error: 'a request with this Idempotency-Key is still in progress',
};

export const userNotFound = (id: number) => ({ error: `user ${id} not found` });

/** A validation failure: an error sentence plus one detail per failed rule. */
export const invalid = (...details: string[]) => ({
  error: `invalid request: ${details.join('; ')}`,
  details,
});

export const ISO_DATE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
