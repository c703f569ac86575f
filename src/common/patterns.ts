// The contract's formats as regular expressions, written once: the validators and pipes test
// input with them and the OpenAPI document publishes their `source` as `pattern`, so a client
// validating against the document refuses exactly what the service refuses. Every pattern is an
// ECMAScript regular expression valid with the `u` flag (JSON Schema validators such as Ajv
// compile `pattern` that way), and the text patterns rely on it: with `u`, `.`-like classes
// count code points, as the contract counts lengths.

/** The largest path id: ids are positive 32-bit integers. */
export const MAX_ID = 2_147_483_647;

/**
 * Decimal digits for an integer from 1 to `max`: no sign, no leading zero, no exponent, and no
 * value above `max` (spelt out digit by digit, since a pattern cannot compare numbers).
 */
export function decimalRange(max: number): RegExp {
  if (!Number.isSafeInteger(max) || max < 1) throw new RangeError(`bad maximum ${max}`);
  const digits = String(max);
  // Shorter numbers: any digits after a non-zero first one.
  const alternatives = digits.length > 1 ? [`[1-9][0-9]{0,${digits.length - 2}}`] : [];
  // As long as max: the same prefix, then a smaller digit, then anything; or max itself.
  for (let i = 0; i < digits.length; i++) {
    const digit = Number(digits[i]);
    const lowest = i === 0 ? 1 : 0;
    if (digit <= lowest) continue;
    const smaller = digit - 1 === lowest ? `${lowest}` : `[${lowest}-${digit - 1}]`;
    const rest = digits.length - i - 1;
    alternatives.push(`${digits.slice(0, i)}${smaller}${rest > 0 ? `[0-9]{${rest}}` : ''}`);
  }
  alternatives.push(digits);
  return new RegExp(`^(?:${alternatives.join('|')})$`);
}

/** A path id: `^[1-9][0-9]*$` and at most 2147483647. */
export const ID_PATTERN = decimalRange(MAX_ID);

/** A user's role: 1 to 32 characters of `[a-z0-9_-]`. */
export const ROLE_PATTERN = /^[a-z0-9_-]{1,32}$/;

/** `Idempotency-Key`: 1 to 255 characters of visible ASCII (no space). */
export const IDEMPOTENCY_KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;

/** A caller's `x-request-id` that is kept: 1 to 128 characters of `[A-Za-z0-9._:-]`. */
export const REQUEST_ID_PATTERN = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * Text of `min` to `max` code points once trimmed (String.prototype.trim, whose white space is
 * exactly `\s`), storable by PostgreSQL: no NUL and no unpaired UTF-16 surrogate (with the `u`
 * flag a lone surrogate is a code point of its own, so the class excludes it while a proper pair
 * still matches as one character). `min` 0 allows an empty or all-blank value.
 */
function trimmedTextPattern(min: 0 | 1, max: number): RegExp {
  const character = '[^\\u0000\\uD800-\\uDFFF]';
  const edge = '[^\\s\\u0000\\uD800-\\uDFFF]';
  const inner = max === 1 ? edge : `${edge}(?:${character}{0,${max - 2}}${edge})?`;
  const core = min === 0 ? `(?:${inner})?` : inner;
  return new RegExp(`^\\s*${core}\\s*$`, 'u');
}

/**
 * Text of at most `max` code points, not trimmed (a post's body), storable as above.
 * The u flag makes `{0,max}` count code points.
 */
function textPattern(max: number): RegExp {
  return new RegExp(`^[^\\u0000\\uD800-\\uDFFF]{0,${max}}$`, 'u');
}

/** A user's name: 1 to 100 code points after trimming. */
export const NAME_PATTERN = trimmedTextPattern(1, 100);

/** A post's title: 1 to 200 code points after trimming. */
export const TITLE_PATTERN = trimmedTextPattern(1, 200);

/** A post's body: at most 10,000 code points. */
export const POST_BODY_PATTERN = textPattern(10_000);

/**
 * `sort`: comma-separated `fields`, each optionally prefixed with `-`, none empty and none named
 * twice (a negative look-ahead with a back-reference finds a field that comes again later).
 */
export function sortPattern(fields: readonly string[]): RegExp {
  const field = `(?:${fields.join('|')})`;
  const twice = `(?!(?:[^,]*,)*-?(${field}),(?:[^,]*,)*-?\\1(?:,|$))`;
  return new RegExp(`^${twice}-?${field}(?:,-?${field})*$`);
}

/**
 * `cursor`: empty (the first page), or a token as the service issues them: base64url payload, a
 * dot, and a 16-character base64url checksum, 1024 characters at most. An altered token of this
 * shape is refused by the checksum, which no pattern can check.
 */
export const CURSOR_PATTERN = /^(?:[A-Za-z0-9_-]{1,1007}\.[A-Za-z0-9_-]{16})?$/;
