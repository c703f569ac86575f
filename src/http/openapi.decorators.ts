import { applyDecorators } from '@nestjs/common';
import {
  ApiHeader,
  ApiOkResponse,
  ApiParam,
  ApiProperty,
  ApiPropertyOptional,
  ApiResponse,
} from '@nestjs/swagger';
import { ERROR_KINDS } from '../common/errors.js';
import { IDEMPOTENCY_KEY_PATTERN, ID_PATTERN, REQUEST_ID_PATTERN } from '../common/patterns.js';

/** The body of every error response. */
export class ErrorBodyDto {
  @ApiProperty({ example: 'user 42 not found', description: 'a sentence a person can act on' })
  error: string;

  @ApiPropertyOptional({
    type: [String],
    description: 'validation errors: one entry per failed rule',
    example: ['name must be a string'],
  })
  details?: string[];
}

/** The example of the service's own error kind answered with this status. */
const exampleOf = (status: number): string =>
  ERROR_KINDS.find(({ httpStatus }) => httpStatus === status)!.example;

/** Each documented error status: when it happens, and a body the service really sends. */
const ERRORS: Record<number, { description: string; example: string }> = {
  400: {
    description:
      'Malformed JSON, a body or query that fails validation, an unknown field or a bad path id',
    example: exampleOf(400),
  },
  401: { description: 'Missing or invalid API key', example: 'invalid or missing API key' },
  404: { description: 'No such resource', example: exampleOf(404) },
  409: {
    description:
      'The email is already used by another user, or a request with this Idempotency-Key is still in progress',
    example: exampleOf(409),
  },
  412: {
    description: 'If-Match matches no current ETag: nothing was changed',
    example: exampleOf(412),
  },
  410: {
    description:
      'The change token is older than the retention: list the users again and follow from their Changes-Token',
    example: exampleOf(410),
  },
  413: { description: 'Body larger than BODY_LIMIT', example: 'request body is too large' },
  415: {
    description: 'Body is not JSON',
    example: 'request body must be JSON (Content-Type: application/json)',
  },
  422: {
    description: 'The Idempotency-Key was used for a different request',
    example: 'Idempotency-Key 5f1c was used for a different request',
  },
  500: {
    description: 'Unexpected failure (cause logged, not returned)',
    example: 'internal server error',
  },
  503: { description: 'The database cannot be reached', example: 'service unavailable' },
};

/** Documents the `{error}` responses a route can give (500 applies to every route). */
export function ApiErrors(...statuses: (keyof typeof ERRORS)[]): MethodDecorator {
  return applyDecorators(
    ...[...statuses, 500].map((status) =>
      ApiResponse({
        status,
        type: ErrorBodyDto,
        description: ERRORS[status].description,
        example: { error: ERRORS[status].example },
      }),
    ),
  );
}

/**
 * An id path parameter, as ParseIdPipe accepts it: a string of decimal digits, because `integer`
 * would let a validator accept `01`, `+1` or ` 1` (it converts before it checks), which the
 * service refuses.
 */
export function ApiIdParam(name = 'id', description = 'user id'): MethodDecorator {
  return ApiParam({
    name,
    description: `${description}: a decimal positive 32-bit integer (1 to 2147483647, no sign or leading zero)`,
    schema: { type: 'string', pattern: ID_PATTERN.source, example: '7' },
  });
}

/**
 * An id in a response body: an integer (a JSON number without a fraction), a positive int32 as
 * the database's identity column and the gRPC `int32 id` make it. `@ApiProperty()` on a `number`
 * says `type: number`, which lets clients generate floats.
 */
export function ApiIdProperty(description: string, example: number): PropertyDecorator {
  return ApiProperty({
    type: 'integer',
    format: 'int32',
    minimum: 1,
    readOnly: true,
    description,
    example,
  });
}

/** A timestamp the service sets (createdAt, updatedAt): read-only, never accepted in a body. */
export function ApiTimestampProperty(description: string): PropertyDecorator {
  return ApiProperty({ type: 'string', format: 'date-time', readOnly: true, description });
}

/**
 * The `x-request-id` header every response carries (docs/api.md, Conventions). Added to every
 * response by the document post-processing in src/http/openapi.ts, as a reference to this component.
 */
export const REQUEST_ID_HEADER = {
  name: 'x-request-id',
  header: {
    description:
      "the caller's x-request-id when it is 1 to 128 characters of [A-Za-z0-9._:-], else a new UUID; also in every log line of the request",
    schema: { type: 'string', pattern: REQUEST_ID_PATTERN.source },
  },
} as const;

export const ETAG_HEADER = {
  ETag: {
    description: 'strong entity tag of this representation, for If-None-Match and If-Match',
    schema: { type: 'string' },
  },
};

export const CREATED_HEADERS = {
  Location: { description: 'path of the created resource', schema: { type: 'string' } },
  ...ETAG_HEADER,
  'Idempotent-Replayed': {
    description: 'true when this is the stored answer of an earlier request with the same key',
    schema: { type: 'string', enum: ['true'] },
  },
};

/** A GET that answers 304 when If-None-Match matches the resource's ETag. */
export function ApiConditionalGet(type: new () => unknown): MethodDecorator {
  return applyDecorators(
    ApiHeader({
      name: 'If-None-Match',
      required: false,
      description: 'ETags (or *): 304 without a body when one matches',
    }),
    ApiOkResponse({ type, headers: ETAG_HEADER }),
    ApiResponse({
      status: 304,
      description: 'Not modified: If-None-Match matched',
      headers: ETAG_HEADER,
    }),
  );
}

/** A write that If-Match makes conditional. */
export function ApiIfMatch(): MethodDecorator {
  return ApiHeader({
    name: 'If-Match',
    required: false,
    description:
      'ETags (or *): the write happens only if one matches the current ETag, else 412 and nothing changes',
  });
}

/** A create made safe to retry by Idempotency-Key. */
export function ApiIdempotencyKey(): MethodDecorator {
  return ApiHeader({
    name: 'Idempotency-Key',
    required: false,
    schema: { type: 'string', pattern: IDEMPOTENCY_KEY_PATTERN.source },
    description:
      '1 to 255 visible ASCII characters. A retry with the same key, path and body gets the stored answer (Idempotent-Replayed: true) and creates nothing; with another path or body: 422',
  });
}
