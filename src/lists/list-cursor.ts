import { createHash, timingSafeEqual } from 'node:crypto';
import { InvalidArgumentError } from '../common/errors.js';

/** A sort key's value as a cursor carries it: timestamps travel as ISO strings. */
export type CursorValue = string | number | null;

const INVALID = 'cursor is invalid: it was altered, or issued for another sort, filter or list';

function checksum(binding: string, payload: string): Buffer {
  return createHash('sha256').update(`${binding}\n${payload}`).digest().subarray(0, 12);
}

/**
 * An opaque, URL-safe token for "the rows after this one": the last row's sort-key values, and a
 * checksum over them and the list's binding (its scope, sort and filters). Tokens are not secret:
 * the checksum only makes an altered token, or one sent with another sort or filter, a 400 rather
 * than a silently different walk. Any replica can read any replica's token.
 */
export function encodeCursor(binding: string, values: CursorValue[]): string {
  const payload = Buffer.from(JSON.stringify(values)).toString('base64url');
  return `${payload}.${checksum(binding, payload).toString('base64url')}`;
}

/** The values of a token made by encodeCursor for the same binding; InvalidArgumentError if not. */
export function decodeCursor(token: string, binding: string, count: number): CursorValue[] {
  const [payload, check, ...rest] = token.split('.');
  if (!payload || !check || rest.length > 0) throw new InvalidArgumentError(INVALID);
  const expected = checksum(binding, payload);
  const given = Buffer.from(check, 'base64url');
  // The decoder skips characters it cannot use (a 17th one, say): only the exact encoding counts.
  if (
    given.length !== expected.length ||
    given.toString('base64url') !== check ||
    !timingSafeEqual(given, expected)
  ) {
    throw new InvalidArgumentError(INVALID);
  }
  let values: unknown;
  try {
    values = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
  } catch {
    throw new InvalidArgumentError(INVALID);
  }
  const valid =
    Array.isArray(values) &&
    values.length === count &&
    values.every((value) => value === null || ['string', 'number'].includes(typeof value));
  if (!valid) throw new InvalidArgumentError(INVALID);
  return values as CursorValue[];
}
