import { Catch } from '@nestjs/common';
import type { Request } from 'express';
import { AllExceptionsFilter } from '../http/all-exceptions.filter.js';
import { SCIM_MEDIA_TYPE } from './scim-response.js';
import { toScimError } from './scim-error.js';

const isScim = (request: Request) => request.path.startsWith('/scim/v2/');

/**
 * The app's exception filter: AllExceptionsFilter's `{"error": …}` everywhere, and under /scim/v2
 * SCIM's error schema in application/scim+json, with the same logging. Global rather than bound
 * to the SCIM controllers, so that what fails before routing (a malformed or oversized body, a
 * body that is not JSON) answers in SCIM's shape on SCIM paths too.
 */
@Catch()
export class ScimExceptionFilter extends AllExceptionsFilter {
  protected override mediaTypeOf(request: Request): string {
    return isScim(request) ? SCIM_MEDIA_TYPE : super.mediaTypeOf(request);
  }

  protected override toError(exception: unknown, request: Request) {
    return isScim(request) ? toScimError(exception, request) : super.toError(exception, request);
  }
}
