import { BadRequestException, Injectable, type PipeTransform } from '@nestjs/common';
import { ID_PATTERN } from '../common/patterns.js';

/** A path id is a decimal positive 32-bit integer; returns undefined for anything else. */
export function parseId(value: unknown): number | undefined {
  return typeof value === 'string' && ID_PATTERN.test(value) ? Number(value) : undefined;
}

/**
 * Validates an id route parameter (already percent-decoded by the router) before any query runs.
 * Nest's ParseIntPipe is not enough: it accepts `-1`, `0` and `2147483648`. Every path id (user
 * and post) answers with the one message docs/api.md gives.
 */
@Injectable()
export class ParseIdPipe implements PipeTransform<string, number> {
  transform(value: string): number {
    const id = parseId(value);
    if (id === undefined) throw new BadRequestException('id must be a positive 32-bit integer');
    return id;
  }
}
