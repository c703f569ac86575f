import {
  type ArgumentMetadata,
  BadRequestException,
  Injectable,
  ValidationPipe,
} from '@nestjs/common';

/**
 * The global ValidationPipe for request bodies. Path ids and list queries have their own pipes
 * (ParseIdPipe, ParseListQueryPipe), which must see the raw strings, so other arguments pass
 * through untouched. A body validated against a DTO class must be a JSON object:
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
