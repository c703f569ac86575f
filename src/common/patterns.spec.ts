import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';
import fc from 'fast-check';
import { CreatePostDto } from '../posts/dto/create-post.dto.js';
import { POST_SORT_FIELDS } from '../posts/dto/list-posts-query.dto.js';
import { CreateUserDto } from '../users/dto/create-user.dto.js';
import { parseIdempotencyKey } from '../idempotency/idempotency.interceptor.js';
import { parseSort } from '../lists/list-query.dto.js';
import { encodeCursor } from '../lists/list-cursor.js';
import {
  CURSOR_PATTERN,
  decimalRange,
  ID_PATTERN,
  IDEMPOTENCY_KEY_PATTERN,
  MAX_ID,
  NAME_PATTERN,
  POST_BODY_PATTERN,
  sortPattern,
  TITLE_PATTERN,
} from './patterns.js';

// Each pattern the OpenAPI document publishes must accept exactly what the service accepts. The
// service's own checks (the DTOs through class-validator, parseSort, parseIdempotencyKey) are the
// reference; the document's validators compile `pattern` with the `u` flag, as tested here.
const asPublished = (pattern: RegExp) => new RegExp(pattern.source, 'u');

/** Whether class-validator accepts `value` for `property` of a DTO (the other fields valid). */
function dtoAccepts<T extends object>(
  type: new () => T,
  valid: Record<string, unknown>,
  property: string,
  value: unknown,
): boolean {
  const dto = plainToInstance(type, { ...valid, [property]: value });
  return !validateSync(dto, { forbidUnknownValues: true }).some((e) => e.property === property);
}

// Text with what breaks naive patterns: white space of every kind, NUL, astral characters (two
// UTF-16 units, one code point) and lone surrogates.
const textUnit = fc.oneof(
  fc.constantFrom(' ', '\t', '\n', '\u00a0', '\u2028', '\ufeff', '\u0000', '\ud800', '\udc00'),
  fc.constantFrom('a', 'é', '😀', '𝒜', '-'),
  fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }),
);
const text = (maxLength: number) =>
  fc.oneof(
    fc.string({ unit: textUnit, maxLength: 12 }),
    fc.string({ unit: textUnit, minLength: maxLength - 3, maxLength: maxLength + 3 }),
    // Long runs of padding around a short value: trimmed first, so they do not count.
    fc
      .tuple(fc.nat(150), fc.string({ unit: textUnit, maxLength: 4 }), fc.nat(150))
      .map(([before, core, after]) => `${' '.repeat(before)}${core}${'\n'.repeat(after)}`),
  );

describe(decimalRange.name, () => {
  const reference = (value: string, max: number) =>
    /^[1-9][0-9]*$/.test(value) && Number(value) <= max;

  it.each([1, 9, 10, 100, 1_000_000, MAX_ID])(
    'accepts exactly the decimal integers 1 to %d',
    (max) => {
      const pattern = asPublished(decimalRange(max));
      const near = fc.integer({ min: -2, max: 2 }).map((delta) => String(max + delta));
      const digits = fc.string({
        unit: fc.constantFrom(...'0123456789+- .e'.split('')),
        maxLength: 12,
      });
      fc.assert(
        fc.property(fc.oneof(near, digits, fc.nat().map(String)), (value) => {
          expect(pattern.test(value)).toBe(reference(value, max));
        }),
        { numRuns: 2000 },
      );
    },
  );

  it('publishes ids as the contract spells them', () => {
    for (const ok of ['1', '7', '2147483647', '1999999999']) expect(ID_PATTERN.test(ok)).toBe(true);
    for (const bad of ['0', '01', '+1', '-1', '1.5', '1e3', ' 1', '2147483648', '9999999999']) {
      expect(ID_PATTERN.test(bad)).toBe(false);
    }
  });
});

describe('text patterns', () => {
  const user = { name: 'Ada' };

  it('NAME_PATTERN accepts exactly the names CreateUserDto accepts', () => {
    const pattern = asPublished(NAME_PATTERN);
    fc.assert(
      fc.property(text(100), (name) => {
        expect(pattern.test(name)).toBe(dtoAccepts(CreateUserDto, user, 'name', name));
      }),
      { numRuns: 1000 },
    );
  });

  it('TITLE_PATTERN and POST_BODY_PATTERN accept exactly what CreatePostDto accepts', () => {
    const title = asPublished(TITLE_PATTERN);
    const body = asPublished(POST_BODY_PATTERN);
    fc.assert(
      fc.property(text(200), (value) => {
        expect(title.test(value)).toBe(dtoAccepts(CreatePostDto, { title: 'x' }, 'title', value));
      }),
      { numRuns: 500 },
    );
    for (const value of ['', 'x'.repeat(10_000), '😀'.repeat(10_000), 'a\u0000', '\ud800']) {
      expect(body.test(value)).toBe(dtoAccepts(CreatePostDto, { title: 'x' }, 'body', value));
    }
    expect(body.test('x'.repeat(10_001))).toBe(false);
  });

  it('refuses blank, NUL and lone surrogates, and counts code points', () => {
    const pattern = asPublished(NAME_PATTERN);
    for (const bad of ['', '   ', '\n\t', 'A\u0000da', '\ud83d', 'x'.repeat(101)]) {
      expect(pattern.test(bad)).toBe(false);
    }
    for (const ok of ['Ada', ` ${'x'.repeat(100)} `, '😀'.repeat(100), 'a b']) {
      expect(pattern.test(ok)).toBe(true);
    }
  });
});

describe(sortPattern.name, () => {
  it('accepts exactly what parseSort accepts', () => {
    const pattern = asPublished(sortPattern(POST_SORT_FIELDS));
    const item = fc.oneof(
      fc.constantFrom(...POST_SORT_FIELDS).map(String),
      fc.constantFrom(...POST_SORT_FIELDS).map((field) => `-${field}`),
      fc.constantFrom('', '-', 'name', 'ID', '--id', 'id ', 'titles', 'createdAtx'),
    );
    fc.assert(
      fc.property(fc.array(item, { minLength: 1, maxLength: 5 }), (items) => {
        const value = items.join(',');
        expect(pattern.test(value)).toBe(Array.isArray(parseSort(value, POST_SORT_FIELDS)));
      }),
      { numRuns: 1000 },
    );
  });
});

describe('IDEMPOTENCY_KEY_PATTERN', () => {
  it('accepts exactly the keys parseIdempotencyKey accepts', () => {
    const pattern = asPublished(IDEMPOTENCY_KEY_PATTERN);
    const accepted = (key: string) => {
      try {
        return parseIdempotencyKey(key) === key;
      } catch {
        return false;
      }
    };
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string({ unit: 'binary', maxLength: 8 }),
          fc.string({ unit: 'binary-ascii', minLength: 250, maxLength: 260 }),
        ),
        (key) => expect(pattern.test(key)).toBe(accepted(key)),
      ),
      { numRuns: 2000 },
    );
  });
});

describe('CURSOR_PATTERN', () => {
  it('accepts the empty cursor and every token the service issues, not a longer checksum', () => {
    const pattern = asPublished(CURSOR_PATTERN);
    expect(pattern.test('')).toBe(true);
    fc.assert(
      fc.property(
        fc.array(fc.oneof(fc.string(), fc.integer(), fc.constant(null)), { maxLength: 3 }),
        (values) => {
          const token = encodeCursor('binding', values);
          expect(pattern.test(token)).toBe(token.length <= 1024);
          expect(pattern.test(`${token}A`)).toBe(false);
        },
      ),
    );
    for (const bad of ['{}', 'a b', 'abc', '.AAAAAAAAAAAAAAAA', 'a.b']) {
      expect(pattern.test(bad)).toBe(false);
    }
  });
});
