import { applyDecorators } from '@nestjs/common';
import { ApiParam, ApiProperty, ApiPropertyOptional, ApiQuery, ApiResponse } from '@nestjs/swagger';
import { DEFAULT_LIMIT, MAX_LIMIT, MAX_PAGE } from './list-query.js';
import { MAX_ID } from './parse-id.pipe.js';

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

/** Each documented error status: when it happens, and a body the service really sends. */
const ERRORS: Record<number, { description: string; example: string }> = {
  400: {
    description:
      'Malformed JSON, a body or query that fails validation, an unknown field or a bad path id',
    example: 'id must be a positive 32-bit integer',
  },
  401: { description: 'Missing or invalid API key', example: 'invalid or missing API key' },
  404: { description: 'No such resource', example: 'user 42 not found' },
  409: {
    description: 'The email is already used by another user',
    example: 'email ada@example.com is already used by another user',
  },
  413: { description: 'Body larger than BODY_LIMIT', example: 'request body is too large' },
  415: {
    description: 'Body is not JSON',
    example: 'request body must be JSON (Content-Type: application/json)',
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

/** An id path parameter, as ParseIdPipe accepts it. */
export function ApiIdParam(name = 'id', description = 'user id'): MethodDecorator {
  return ApiParam({
    name,
    description: `${description}: a decimal positive 32-bit integer`,
    schema: { type: 'integer', minimum: 1, maximum: MAX_ID },
  });
}

/**
 * An id in a response body: an integer (a JSON number without a fraction), a positive int32 as
 * the database's identity column and the gRPC `int32 id` make it. `@ApiProperty()` on a `number`
 * says `type: number`, which lets clients generate floats.
 */
export function ApiIdProperty(description: string, example: number): PropertyDecorator {
  return ApiProperty({ type: 'integer', format: 'int32', minimum: 1, description, example });
}

/**
 * The `x-request-id` header every response carries (CONTRACT.md, Everywhere). Added to every
 * response by the document post-processing in src/openapi.ts, as a reference to this component.
 */
export const REQUEST_ID_HEADER = {
  name: 'x-request-id',
  header: {
    description:
      "the caller's x-request-id when it is 1 to 128 characters of [A-Za-z0-9._:-], else a new UUID; also in every log line of the request",
    schema: { type: 'string', pattern: '^[A-Za-z0-9._:-]{1,128}$' },
  },
} as const;

/** The query parameters of a collection list. */
export function ApiListQuery(
  sortFields: readonly string[],
  filters: MethodDecorator[] = [],
): MethodDecorator {
  return applyDecorators(
    ApiQuery({
      name: 'sort',
      required: false,
      type: String,
      description: `comma-separated fields from ${sortFields.join(', ')}; a leading - sorts descending; ties break by id`,
      example: '-createdAt,name',
    }),
    ApiQuery({
      name: 'page',
      required: false,
      schema: { type: 'integer', minimum: 1, maximum: MAX_PAGE, default: 1 },
    }),
    ApiQuery({
      name: 'limit',
      required: false,
      schema: { type: 'integer', minimum: 1, maximum: MAX_LIMIT, default: DEFAULT_LIMIT },
    }),
    ...filters,
  );
}

export const PAGE_HEADERS = {
  'X-Total-Count': { description: 'rows matching the filter', schema: { type: 'integer' } },
  Link: { description: 'RFC 8288 links: first, prev, next, last', schema: { type: 'string' } },
};

export const LOCATION_HEADER = {
  Location: { description: 'path of the created resource', schema: { type: 'string' } },
};
