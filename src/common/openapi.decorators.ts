import { applyDecorators } from '@nestjs/common';
import { ApiParam, ApiProperty, ApiPropertyOptional, ApiResponse } from '@nestjs/swagger';
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

const ERROR_DESCRIPTIONS: Record<number, string> = {
  400: 'Malformed JSON, a body or query that fails validation, an unknown field or a bad path id',
  401: 'Missing or invalid API key',
  404: 'No such resource',
  409: 'The email is already used by another user',
  413: 'Body larger than BODY_LIMIT',
  415: 'Body is not JSON',
  503: 'The database cannot be reached',
};

/** Documents the `{error}` responses a route can give (500 applies to every route). */
export function ApiErrors(...statuses: number[]): MethodDecorator {
  return applyDecorators(
    ...[...statuses, 500].map((status) =>
      ApiResponse({
        status,
        type: ErrorBodyDto,
        description:
          ERROR_DESCRIPTIONS[status] ?? 'Unexpected failure (cause logged, not returned)',
      }),
    ),
  );
}

export function ApiIdParam(name = 'id', description = 'user id'): MethodDecorator {
  return ApiParam({
    name,
    description: `${description}: a decimal positive 32-bit integer`,
    schema: { type: 'integer', minimum: 1, maximum: MAX_ID },
  });
}

export const PAGE_HEADERS = {
  'X-Total-Count': { description: 'rows matching the filter', schema: { type: 'integer' } },
  Link: {
    description:
      'RFC 8288 links. Page mode: first, prev, next, last. Cursor mode: first, and next while rows follow',
    schema: { type: 'string' },
  },
};

export const LOCATION_HEADER = {
  Location: { description: 'path of the created resource', schema: { type: 'string' } },
};
