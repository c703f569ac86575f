// Calls sent as given, for the specs about what the service gives away: an HTTP request on a
// connection of its own (no client normalises it), a GetUserRequest encoded by hand, and the check
// that an answer shows nothing internal (scripts/lib/leak-patterns.mjs).
import { send } from '../../scripts/lib/http-client.mjs';
import { findLeak } from '../../scripts/lib/leak-patterns.mjs';

/** One request as given, on a connection of its own. */
export const call = (
  base: string,
  method: string,
  path: string,
  headers: Record<string, string> = {},
  body?: string,
) => send(base, { method, path, headers, body });

/** A GetUserRequest: field 1 (id) as a varint. */
export const getUserRequest = (id: number) => Buffer.from([0x08, id]);

export function expectNothingInternal(text: string): void {
  expect(findLeak(text)).toBeUndefined();
}
