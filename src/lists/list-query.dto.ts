import { applyDecorators } from '@nestjs/common';
import { ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { ValidateBy, type ValidationArguments } from 'class-validator';
import { CURSOR_PATTERN, decimalRange, sortPattern } from '../common/patterns.js';

export const MAX_PAGE = 1_000_000;
export const MAX_LIMIT = 100;
export const DEFAULT_LIMIT = 20;

export type SortDirection = 'ASC' | 'DESC';

export interface SortKey<F extends string = string> {
  field: F;
  direction: SortDirection;
}

const repeated = (name: string) => `query parameter ${name} must be given at most once`;

/**
 * Parses `sort` (`-createdAt,name`) against an allow-list of fields; a leading `-` means
 * descending. Returns the reason instead of keys when the value breaks a rule.
 */
export function parseSort<F extends string>(
  value: string,
  fields: readonly F[],
): SortKey<F>[] | { error: string } {
  const keys: SortKey<F>[] = [];
  for (const item of value.split(',')) {
    const descending = item.startsWith('-');
    const field = descending ? item.slice(1) : item;
    if (field === '') return { error: 'sort must not contain an empty field' };
    if (!(fields as readonly string[]).includes(field)) {
      return { error: `sort field ${field} is not one of ${fields.join(', ')}` };
    }
    if (keys.some((key) => key.field === field)) {
      return { error: `sort field ${field} is named twice` };
    }
    keys.push({ field: field as F, direction: descending ? 'DESC' : 'ASC' });
  }
  return keys;
}

/**
 * A query parameter given as decimal digits (no sign, no leading zero, no exponent) between `min`
 * (0 or 1) and `max`. Express turns a repeated parameter into an array, which is refused as such.
 * Documented as a string with the exact pattern: as `integer`, a validator would convert `01` or
 * `+5` first and accept them.
 */
export function QueryInteger(
  max: number,
  description: string,
  fallback?: number,
  min: 0 | 1 = 1,
): PropertyDecorator {
  const positive = decimalRange(max);
  const digits = min === 0 ? new RegExp(`^(?:0|${positive.source.slice(1, -1)})$`) : positive;
  return applyDecorators(
    ApiPropertyOptional({
      type: 'string',
      pattern: digits.source,
      default: fallback === undefined ? undefined : String(fallback),
      description: `${description}: an integer from ${min} to ${max}, in decimal digits without sign or leading zero`,
    }),
    // Converted only when well-formed; anything else stays as sent, for the validator to refuse.
    Transform(({ value }: { value: unknown }) =>
      typeof value === 'string' && digits.test(value) ? Number(value) : value,
    ),
    ValidateBy({
      name: 'queryInteger',
      validator: {
        validate: (value: unknown) =>
          typeof value === 'number' && Number.isInteger(value) && value >= min && value <= max,
        defaultMessage: ({ property, value }: ValidationArguments) =>
          Array.isArray(value)
            ? repeated(property)
            : `${property} must be an integer between ${min} and ${max}`,
      },
    }),
  );
}

/** An exact-match filter: one value matching `pattern`. */
export function QueryFilter(pattern: RegExp, message: string, description: string) {
  return applyDecorators(
    ApiPropertyOptional({ type: 'string', pattern: pattern.source, description }),
    ValidateBy({
      name: 'queryFilter',
      validator: {
        validate: (value: unknown) => typeof value === 'string' && pattern.test(value),
        defaultMessage: ({ property, value }: ValidationArguments) =>
          Array.isArray(value) ? repeated(property) : message,
      },
    }),
  );
}

/** `sort`: comma-separated fields from `fields`, each optionally prefixed with `-`. */
export function QuerySort(fields: readonly string[]): PropertyDecorator {
  return applyDecorators(
    ApiPropertyOptional({
      type: 'string',
      pattern: sortPattern(fields).source,
      description: `comma-separated fields from ${fields.join(', ')}, none named twice; a leading - sorts descending; ties are broken by id ascending`,
      example: fields.includes('createdAt') ? '-createdAt' : fields[0],
    }),
    Transform(({ value }: { value: unknown }) => {
      if (typeof value !== 'string') return value;
      const keys = parseSort(value, fields);
      return Array.isArray(keys) ? keys : value;
    }),
    ValidateBy({
      name: 'querySort',
      validator: {
        // Parsed keys are objects; a repeated parameter arrives as an array of strings.
        validate: (value: unknown) =>
          Array.isArray(value) && value.every((key) => typeof key === 'object'),
        defaultMessage: ({ value }: ValidationArguments) => {
          if (typeof value !== 'string') return repeated('sort');
          const parsed = parseSort(value, fields);
          return 'error' in parsed ? parsed.error : 'sort is invalid';
        },
      },
    }),
  );
}

/**
 * The query of a collection list: page numbers (`page`, `limit`) or a cursor walk (`cursor`,
 * `limit`), and `sort` and the filters, which each feature's subclass declares with its own
 * allow-list. Unknown parameters are ignored; a known one given twice is a 400.
 */
export abstract class ListQueryDto<F extends string = string> {
  @QueryInteger(MAX_PAGE, 'page number (page mode)', 1)
  page?: number;

  @QueryInteger(MAX_LIMIT, 'rows per page', DEFAULT_LIMIT)
  limit: number = DEFAULT_LIMIT;

  @ApiPropertyOptional({
    type: 'string',
    pattern: CURSOR_PATTERN.source,
    description:
      'cursor mode: empty for the first page, then the token of the `rel="next"` link as it is (an altered token is a 400); not with page',
  })
  @ValidateBy({
    name: 'queryCursor',
    validator: {
      validate: (value: unknown, { object }: ValidationArguments) =>
        typeof value === 'string' &&
        CURSOR_PATTERN.test(value) &&
        (object as ListQueryDto).page === undefined,
      defaultMessage: ({ value, object }: ValidationArguments) => {
        if (Array.isArray(value)) return repeated('cursor');
        if ((object as ListQueryDto).page !== undefined) {
          return 'cursor is invalid together with page: send one of them';
        }
        return 'cursor is invalid: send the token of a rel="next" link as it is';
      },
    },
  })
  cursor?: string;

  abstract sort: SortKey<F>[];
}
