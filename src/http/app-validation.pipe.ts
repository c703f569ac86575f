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

/** The most query strings remembered per DTO class (see RememberedQueries). */
export const REMEMBERED_QUERIES_MAX = 1000;

/**
 * List queries validated lately, by their content. The query DTOs' transforms and rules are pure
 * functions of the query string, so the same query (a list polled, the same page of a role asked
 * again) validates to the same DTO: it is looked up instead of going through class-transformer
 * and class-validator again. Only valid queries are remembered, at most REMEMBERED_QUERIES_MAX per
 * class (the oldest go first); their DTOs are frozen, as the requests that sent them share them.
 */
class RememberedQueries {
  private readonly byClass = new Map<unknown, Map<string, object>>();

  async validated(
    metatype: unknown,
    query: unknown,
    validate: () => Promise<unknown>,
  ): Promise<unknown> {
    let entries = this.byClass.get(metatype);
    if (!entries) this.byClass.set(metatype, (entries = new Map<string, object>()));
    // A query string parses to strings, and arrays and objects of them: its JSON is an exact key.
    const key = JSON.stringify(query);
    const known = entries.get(key);
    if (known) return known;
    const dto = deepFreeze((await validate()) as object);
    entries.set(key, dto);
    if (entries.size > REMEMBERED_QUERIES_MAX) entries.delete(entries.keys().next().value!);
    return dto;
  }
}

function deepFreeze<T extends object>(value: T): T {
  for (const child of Object.values(value)) {
    if (typeof child === 'object' && child !== null) deepFreeze(child as object);
  }
  return Object.freeze(value);
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

  private readonly queries = new RememberedQueries();

  override async transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    if (metadata.type === 'query') {
      const validate = () => queryValidation.transform(value, metadata);
      if (!this.toValidate(metadata)) return validate();
      return this.queries.validated(metadata.metatype, value, validate);
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
