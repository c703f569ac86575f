// fast-check generators of the property-based tests: nasty strings, JSON of any shape, request
// bodies for users and posts, path ids and their percent-encodings.
import fc from 'fast-check';
import { json, MAX_ID } from './fuzz-app.js';

export const loneSurrogate = fc
  .integer({ min: 0xd800, max: 0xdfff })
  .map((c) => String.fromCharCode(c));
const specialChar = fc.constantFrom(
  '\u0000',
  ' ',
  '\t',
  '\n',
  '\r',
  '\u00a0',
  '\ufeff',
  '\u2028',
  '\u3000',
  '"',
  '\\',
  '%',
  '/',
  '.',
  '<',
  "'",
  '@',
  '😀',
  '\u0301',
  '\uffff',
  '\ufffe',
  '\u{10ffff}',
);
export const anyChar = fc.oneof(
  { weight: 4, arbitrary: fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary-ascii', minLength: 1, maxLength: 1 }) },
  { weight: 2, arbitrary: specialChar },
  { weight: 1, arbitrary: loneSurrogate },
);

/** Short strings of anything: NUL, unpaired surrogates, astral characters, whitespace. */
export const nastyString = fc.string({ unit: anyChar, maxLength: 16 });

/** Strings around the length limits (100, 200, 254, 10,000 code points), padded or not. */
export const sizedString = fc
  .tuple(
    fc.constantFrom('a', 'é', '😀', ' ', 'x '),
    fc.oneof(
      fc.integer({ min: 0, max: 5 }),
      fc.integer({ min: 95, max: 105 }),
      fc.integer({ min: 195, max: 205 }),
      fc.integer({ min: 250, max: 258 }),
      fc.integer({ min: 9995, max: 10005 }),
    ),
    fc.constantFrom('', ' ', '\t\n'),
  )
  .map(([unit, n, pad]) => pad + unit.repeat(n) + pad);

/** A huge string: well past every field limit, sometimes past the body limit. */
const hugeString = fc.integer({ min: 10_000, max: 120_000 }).map((n) => 'h'.repeat(n));

const anyString = fc.oneof(
  { weight: 6, arbitrary: nastyString },
  { weight: 2, arbitrary: sizedString },
  { weight: 1, arbitrary: hugeString },
);

/** A JSON value of any type, strings included, nested a few levels. */
export const anyJson: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 3, arbitrary: anyString },
  { weight: 3, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
  { weight: 1, arbitrary: fc.constantFrom(null, true, false, 0, -1, 1.5, 1e308, '', []) },
  { weight: 1, arbitrary: fc.array(anyString, { maxLength: 3 }) },
  { weight: 1, arbitrary: fc.dictionary(nastyString, anyString, { maxKeys: 3 }) },
);

export const smallJson = fc.oneof(nastyString, fc.jsonValue({ maxDepth: 2 }));

const validName = fc.oneof(
  fc.string({ unit: 'grapheme', minLength: 1, maxLength: 30 }),
  sizedString,
  fc.constantFrom('Ada', '  Grace Hopper  ', '😀', 'ß', "O'Brien", '<script>'),
);
const knownEmail = fc
  .tuple(fc.integer({ min: 1, max: 8 }), fc.boolean())
  .map(([n, upper]) => (upper ? `TAKEN-${n}@EXAMPLE.COM` : `taken-${n}@example.com`));
const newEmail = fc.oneof(
  fc.emailAddress(),
  fc.integer({ min: 1, max: 1e9 }).map((n) => `fuzz-${n}@example.com`),
);
const emailValue = fc.oneof(
  { weight: 4, arbitrary: newEmail },
  { weight: 2, arbitrary: knownEmail },
  { weight: 1, arbitrary: fc.constant(null) },
  // An email with an unpaired surrogate has a property of its own (unstorable text, below).
  {
    weight: 2,
    arbitrary: anyJson.filter((v) => typeof v !== 'string' || v.isWellFormed()),
  },
);
const validRole = fc.stringMatching(/^[a-z0-9_-]{1,32}$/);
const roleValue = fc.oneof({ weight: 5, arbitrary: validRole }, { weight: 1, arbitrary: anyJson });

/** Field names a client may not send: the assigned ones, near-misses and random ones. */
const extraKey = fc.oneof(
  fc.constantFrom('id', 'createdAt', 'updatedAt', 'userId', 'Name', 'NAME', 'name ', 'e-mail', ''),
  nastyString.filter((key) => !['name', 'email', 'role', 'title', 'body'].includes(key)),
);
/** Names of Object.prototype members: unknown fields that class-transformer treats specially. */
export const prototypeKey = fc.constantFrom(
  '__proto__',
  'constructor',
  'toString',
  'valueOf',
  'hasOwnProperty',
  'isPrototypeOf',
  '__defineGetter__',
);

export type Entry = [string, unknown];
/** A JSON object written from entries, so `__proto__` and repeated keys reach the wire as such. */
export const objectText = (entries: Entry[]) =>
  `{${entries.map(([key, value]) => `${json(key)}:${json(value)}`).join(',')}}`;

const maybe = <T>(arbitrary: fc.Arbitrary<T>, weight = 4) =>
  fc.option(arbitrary, { nil: undefined, freq: weight });

/** Bodies for users and posts: mostly objects of the right fields, sometimes anything at all. */
function bodyText(fields: Record<string, fc.Arbitrary<unknown>>): fc.Arbitrary<string | undefined> {
  const object = fc
    .tuple(
      ...Object.entries(fields).map(([name, value]) =>
        maybe(
          value.map((v): Entry => [name, v]),
          6,
        ),
      ),
      fc.oneof(
        { weight: 10, arbitrary: fc.constant([] as Entry[]) },
        {
          weight: 1,
          arbitrary: fc.array(fc.tuple(extraKey, anyJson), { minLength: 1, maxLength: 2 }),
        },
      ),
    )
    .map((parts) => {
      // Not parts.pop(): fast-check may map the same generated value again.
      const extras = parts[parts.length - 1] as Entry[];
      const known = parts.slice(0, -1).filter(Boolean) as Entry[];
      return objectText([...extras.slice(1), ...known, ...extras.slice(0, 1)]);
    });
  return fc.oneof(
    { weight: 20, arbitrary: object },
    { weight: 1, arbitrary: anyJson.map(json) },
    // Malformed JSON: a valid body cut short, or a random string.
    {
      weight: 1,
      arbitrary: fc.tuple(object, fc.nat()).map(([text, n]) => text.slice(0, n % text.length)),
    },
    { weight: 1, arbitrary: nastyString },
    { weight: 1, arbitrary: fc.constant(undefined) },
  );
}

export const userBody = bodyText({
  name: fc.oneof({ weight: 5, arbitrary: validName }, { weight: 1, arbitrary: anyJson }),
  email: emailValue,
  role: roleValue,
});
export const postBody = bodyText({
  title: fc.oneof({ weight: 5, arbitrary: validName }, { weight: 1, arbitrary: anyJson }),
  body: fc.oneof(fc.string({ unit: 'grapheme', maxLength: 50 }), sizedString, anyJson),
});

/** Path ids: ones that exist, ones that do not, and everything docs/api.md makes a 400. */
const idString = fc.oneof(
  { weight: 8, arbitrary: fc.integer({ min: 1, max: 14 }).map(String) },
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      '0',
      '-1',
      '1.5',
      '01',
      '+1',
      '1e3',
      '0x10',
      ' 1',
      '1 ',
      'abc',
      '1abc',
      ' ',
      '2147483647',
      '2147483648',
      '99999999999',
      '\u0661',
      '\uff11',
      '1\u0000',
      '..',
      '1/2',
    ),
  },
  { weight: 2, arbitrary: fc.integer({ min: -(2 ** 33), max: 2 ** 33 }).map(String) },
  { weight: 2, arbitrary: nastyString.filter((s) => s.length > 0) },
);
/** Every byte percent-encoded, only the unsafe ones, or (when safe) nothing at all. */
export const pathSegment = fc
  .tuple(idString, fc.constantFrom('all', 'needed', 'raw'))
  .map(([id, how]) => {
    const bytes = Buffer.from(id, 'utf8');
    const pct = (b: number) => `%${b.toString(16).padStart(2, '0').toUpperCase()}`;
    const encoded = [...bytes]
      .map((b) =>
        how === 'all' ||
        !/[A-Za-z0-9._~-]/.test(String.fromCharCode(b)) ||
        (how === 'raw' && b > 127)
          ? pct(b)
          : String.fromCharCode(b),
      )
      .join('');
    // What the server decodes the segment to (an unpaired surrogate arrives as U+FFFD).
    return { segment: encoded, decoded: bytes.toString('utf8') };
  });

/** A string as it reaches the server in UTF-8: an unpaired surrogate becomes U+FFFD. */
export const asSent = (value: string) => Buffer.from(value, 'utf8').toString('utf8');

export const parseIdModel = (value: string): number | undefined =>
  /^[1-9][0-9]*$/.test(value) && Number(value) <= MAX_ID ? Number(value) : undefined;
