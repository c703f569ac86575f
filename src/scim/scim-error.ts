import type { Request } from 'express';
import { toHttpError } from '../http/all-exceptions.filter.js';
import { ERROR } from './scim-schema.js';

/** The `scimType` values RFC 7644 §3.12 names, for the errors this service answers. */
export type ScimErrorType =
  | 'uniqueness'
  | 'invalidFilter'
  | 'invalidValue'
  | 'invalidSyntax'
  | 'mutability'
  | 'noTarget'
  | 'invalidPath'
  | 'tooMany'
  | 'invalidVers';

/** A refusal in SCIM's own terms: a status and, for a 400 or 409, its scimType. */
export class ScimError extends Error {
  override readonly name = 'ScimError';

  constructor(
    readonly status: number,
    message: string,
    readonly scimType?: ScimErrorType,
  ) {
    super(message);
  }
}

export const invalidValue = (message: string) => new ScimError(400, message, 'invalidValue');

export interface ScimErrorBody {
  schemas: [typeof ERROR];
  status: string;
  scimType?: ScimErrorType;
  detail: string;
}

/** The scimType of the service's other errors, by status (RFC 7644 §3.12). */
const TYPE_OF_STATUS: Record<number, ScimErrorType> = {
  400: 'invalidValue',
  409: 'uniqueness',
};

/** body-parser's refusal of a body that is not JSON, as Nest wraps it. */
function isMalformedJson(exception: unknown): boolean {
  const cause = (exception as { cause?: { type?: unknown } } | null)?.cause;
  return cause?.type === 'entity.parse.failed';
}

/**
 * The SCIM error (status as a string, scimType, detail) of anything thrown on a SCIM route. The
 * status and the text come from the service's one mapping (toHttpError): an internal error's
 * text never reaches a client here either.
 */
export function toScimError(
  exception: unknown,
  request?: Pick<Request, 'method' | 'path'>,
): { status: number; body: ScimErrorBody } {
  const { status, body: http } =
    exception instanceof ScimError
      ? { status: exception.status, body: { error: exception.message } }
      : toHttpError(exception, request);
  const scimType =
    exception instanceof ScimError
      ? exception.scimType
      : isMalformedJson(exception)
        ? 'invalidSyntax'
        : TYPE_OF_STATUS[status];
  const body: ScimErrorBody = { schemas: [ERROR], status: String(status), detail: http.error };
  if (scimType) body.scimType = scimType;
  return { status, body };
}
