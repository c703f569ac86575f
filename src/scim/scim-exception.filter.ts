import { Catch } from '@nestjs/common';
import type { Request } from 'express';
import { AllExceptionsFilter } from '../http/all-exceptions.filter.js';
import { SCIM_MEDIA_TYPE } from './scim-response.js';
import { toScimError } from './scim-error.js';

/**
 * The exception filter of the SCIM controllers (bound with @UseFilters, so Nest runs it instead
 * of the global one): the same logging, and SCIM's error schema in application/scim+json.
 */
@Catch()
export class ScimExceptionFilter extends AllExceptionsFilter {
  protected override readonly mediaType = SCIM_MEDIA_TYPE;

  protected override toError(exception: unknown, request: Request) {
    return toScimError(exception, request);
  }
}
