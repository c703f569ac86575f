import { applyDecorators } from '@nestjs/common';
import { Transform } from 'class-transformer';
import { isEmail, IsString, ValidateBy, ValidateIf, type ValidationOptions } from 'class-validator';

/** Length in Unicode code points, as docs/api.md counts it (and as PostgreSQL's varchar does). */
export function codePointLength(value: string): number {
  // The string iterator yields code points (a surrogate pair is one step), not UTF-16 units.
  let length = 0;
  const iterator = value[Symbol.iterator]();
  while (!iterator.next().done) length++;
  return length;
}

/**
 * Text PostgreSQL can store and give back unchanged: no NUL character (text columns reject it)
 * and no unpaired UTF-16 surrogate (the driver would silently store U+FFFD instead).
 */
export function isStorableText(value: string): boolean {
  return !value.includes('\u0000') && value.isWellFormed();
}

export function IsStorableText(options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isStorableText',
      validator: {
        validate: (value: unknown) => typeof value === 'string' && isStorableText(value),
        defaultMessage: (args) =>
          `${args?.property} must not contain NUL characters or unpaired surrogates`,
      },
    },
    options,
  );
}

/**
 * A valid email address (class-validator's isEmail defaults). Storable text is checked first:
 * validator.js throws on an unpaired surrogate instead of answering false.
 */
export function IsEmailAddress(options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isEmailAddress',
      validator: {
        validate: (value: unknown) =>
          typeof value === 'string' && isStorableText(value) && isEmail(value),
        defaultMessage: (args) => `${args?.property} must be a valid email address`,
      },
    },
    options,
  );
}

export function CodePointLength(
  min: number,
  max: number,
  options?: ValidationOptions,
): PropertyDecorator {
  return ValidateBy(
    {
      name: 'codePointLength',
      constraints: [min, max],
      validator: {
        validate: (value: unknown) => {
          if (typeof value !== 'string') return false;
          const length = codePointLength(value);
          return length >= min && length <= max;
        },
        defaultMessage: (args) =>
          min === 0
            ? `${args?.property} must be at most ${max} characters long`
            : `${args?.property} must be ${min} to ${max} characters long`,
      },
    },
    options,
  );
}

/**
 * A string field: storable text of `min` to `max` code points, optionally trimmed first
 * (so the limits apply to the stored, trimmed value).
 */
export function IsText(min: number, max: number, { trim = false } = {}): PropertyDecorator {
  return applyDecorators(
    ...(trim
      ? [
          Transform(({ value }: { value: unknown }) =>
            typeof value === 'string' ? value.trim() : value,
          ),
        ]
      : []),
    IsString(),
    IsStorableText(),
    CodePointLength(min, max),
  );
}

/**
 * The field may be left out, but not sent as null (class-validator's IsOptional allows both).
 */
export function IsOmittable(): PropertyDecorator {
  return ValidateIf((_object: object, value: unknown) => value !== undefined);
}
