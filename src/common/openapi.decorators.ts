import { applyDecorators } from '@nestjs/common';
import {
  ApiHeader,
  ApiOkResponse,
  ApiParam,
  ApiProperty,
  ApiPropertyOptional,
  ApiResponse,
} from '@nestjs/swagger';
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
  409: 'The email is already used by another user, or a request with this Idempotency-Key is still in progress',
  412: 'If-Match matches no current ETag: nothing was changed',
  413: 'Body larger than BODY_LIMIT',
  415: 'Body is not JSON',
  422: 'The Idempotency-Key was used for a different request',
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
    description:
      '1 to 255 visible ASCII characters. A retry with the same key, path and body gets the stored answer (Idempotent-Replayed: true) and creates nothing; with another path or body: 422',
  });
}
