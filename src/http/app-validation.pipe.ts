import {
  type ArgumentMetadata,
  BadRequestException,
  Injectable,
  ValidationPipe,
} from '@nestjs/common';

/**
 * Query strings (list queries): unknown parameters are ignored rather than refused, and the answer
 * names the first broken rule only, as one sentence (`limit must be an integer between 1 and 100`).
 */
const queryValidation = new ValidationPipe({
  whitelist: true,
  forbidNonWhitelisted: false,
  transform: true,
  skipMissingProperties: true,
  stopAtFirstError: true,
  validationError: { target: false, value: false },
  exceptionFactory: (errors) =>
    new BadRequestException(
      Object.values(errors[0]?.constraints ?? {})[0] ?? 'the query string is invalid',
    ),
});

/** An empty query string: nothing to convert or check, the DTO's defaults are the answer. */
function isEmptyQuery(value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return false;
  for (const _ in value) return false;
  return true;
}

/**
 * The global ValidationPipe: request bodies and list queries are validated against their DTO
 * classes. Path ids have their own pipe (ParseIdPipe), which must see the raw string, so other
 * arguments pass through untouched. A body validated against a DTO class must be a JSON object:
 * class-transformer would otherwise turn an array body into an array of DTOs that class-validator
 * passes unchecked.
 */
@Injectable()
export class AppValidationPipe extends ValidationPipe {
  constructor() {
    super({
      whitelist: true,
      forbidNonWhitelisted: true,
      transform: true,
      stopAtFirstError: true,
      forbidUnknownValues: true,
      validationError: { target: false, value: false },
    });
  }

  override async transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    if (metadata.type === 'query') {
      // The query DTOs' fields are all optional: an empty query string is their defaults, as
      // validating it would find (app-validation.pipe.spec.ts holds both paths to that).
      if (this.toValidate(metadata) && isEmptyQuery(value)) return new metadata.metatype!();
      return queryValidation.transform(value, metadata);
    }
    if (metadata.type !== 'body') return value;
    if (
      this.toValidate(metadata) &&
      value !== undefined &&
      (typeof value !== 'object' || value === null || Array.isArray(value))
    ) {
      throw new BadRequestException('request body must be a JSON object');
    }
    if (this.toValidate(metadata) && typeof value === 'object' && value !== null) {
      // class-transformer silently drops keys such as __proto__ or constructor, so the whitelist
      // never sees them; they are unknown fields like any other.
      const inherited = Object.keys(value).filter((key) => key in Object.prototype);
      if (inherited.length > 0) {
        throw new BadRequestException(inherited.map((key) => `property ${key} should not exist`));
      }
    }
    return super.transform(value, metadata);
  }
}
