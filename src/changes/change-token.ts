import { InvalidArgumentError } from '../common/errors.js';
import { decodeCursor, encodeCursor } from '../lists/list-cursor.js';

/**
 * A place in the feed: after the event (position, id). Events are delivered in (position, id)
 * order; `{ position: h, id: 0n }` is "everything from position h on", the token a list response
 * carries (ids start at 1).
 */
export interface FeedKey {
  position: bigint;
  id: bigint;
}

/** The start of the feed: before every event. */
export const FEED_START: FeedKey = { position: 0n, id: 0n };

/** What a token is bound to: a list cursor can never pass for a change token, nor the reverse. */
const BINDING = 'users/changes';
const MAX_BIGINT = 2n ** 63n - 1n;
const DIGITS = /^(?:0|[1-9][0-9]{0,18})$/;

export const INVALID_TOKEN = 'the change token is invalid: it was altered or not issued here';

/** Whether `a` comes after `b` in feed order. */
export function isAfter(a: FeedKey, b: FeedKey): boolean {
  return a.position > b.position || (a.position === b.position && a.id > b.id);
}

/**
 * An opaque, URL-safe token for a FeedKey, with a checksum (as list cursors have): a token altered
 * on its way is refused, not silently read as another place in the feed. The checksum is no
 * signature: anyone can make a token that passes it (docs/events.md, Tokens). A made-up token only
 * chooses where its holder reads from, and one beyond anything the server can have issued is
 * refused by the reader (ChangesService).
 */
export function encodeChangeToken(key: FeedKey): string {
  return encodeCursor(BINDING, [key.position.toString(), key.id.toString()]);
}

/** The key of a token made by encodeChangeToken; InvalidArgumentError if it is not one. */
export function decodeChangeToken(token: string): FeedKey {
  let values: unknown[];
  try {
    values = decodeCursor(token, BINDING, 2);
  } catch {
    throw new InvalidArgumentError(INVALID_TOKEN);
  }
  const [position, id] = values.map((value) =>
    typeof value === 'string' && DIGITS.test(value) ? BigInt(value) : -1n,
  );
  if (position < 0n || id < 0n || position > MAX_BIGINT || id > MAX_BIGINT) {
    throw new InvalidArgumentError(INVALID_TOKEN);
  }
  return { position, id };
}
