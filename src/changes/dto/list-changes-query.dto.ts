import { ApiPropertyOptional } from '@nestjs/swagger';
import { ValidateBy, type ValidationArguments } from 'class-validator';
import { CURSOR_PATTERN } from '../../common/patterns.js';
import { QueryInteger } from '../../lists/list-query.dto.js';
import { INVALID_TOKEN } from '../change-token.js';

export const MAX_CHANGES_LIMIT = 1000;
export const DEFAULT_CHANGES_LIMIT = 100;
export const MAX_WAIT_S = 30;

/** `GET /users/changes`: where to read from, how many events, how long an empty page waits. */
export class ListChangesQueryDto {
  // A token has the shape of a list cursor (payload, dot, checksum); the checksum is checked when
  // the token is decoded.
  @ApiPropertyOptional({
    type: 'string',
    pattern: CURSOR_PATTERN.source,
    description:
      'the `next` token of the previous page, or the `Changes-Token` of a `GET /users` answer; absent or empty: from the oldest event retained. An altered token is a 400; one older than the retention a 410',
  })
  @ValidateBy({
    name: 'changeToken',
    validator: {
      validate: (value: unknown) => typeof value === 'string' && CURSOR_PATTERN.test(value),
      defaultMessage: ({ value }: ValidationArguments) =>
        Array.isArray(value) ? 'query parameter after must be given at most once' : INVALID_TOKEN,
    },
  })
  after?: string;

  @QueryInteger(MAX_CHANGES_LIMIT, 'events per page', DEFAULT_CHANGES_LIMIT)
  limit: number = DEFAULT_CHANGES_LIMIT;

  @QueryInteger(MAX_WAIT_S, 'seconds an empty page waits for the first new event (long poll)', 0, 0)
  wait: number = 0;
}
