import { decodeCursor, encodeCursor } from './list-cursor.js';
import { InvalidArgumentError } from '../common/errors.js';

const INVALID = new InvalidArgumentError(
  'cursor is invalid: it was altered, or issued for another sort, filter or list',
);

describe(encodeCursor.name, () => {
  const binding = 'users?role=admin sort=DESC createdAt';
  const values = ['2026-11-23T10:00:00.000Z', 42];

  it('round-trips the values through a URL-safe token', () => {
    const token = encodeCursor(binding, values);
    expect(token).toMatch(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
    expect(decodeCursor(token, binding, 2)).toEqual(values);
  });

  it('carries NULL (a user without an email)', () => {
    expect(decodeCursor(encodeCursor(binding, [null, 3]), binding, 2)).toEqual([null, 3]);
  });

  it('refuses a token used with another sort or filter', () => {
    const token = encodeCursor(binding, values);
    expect(() => decodeCursor(token, 'users sort=DESC createdAt', 2)).toThrow(INVALID);
  });

  it.each([
    [
      'a changed payload',
      (token: string) => `${encodeCursor(binding, [1, 2]).split('.')[0]}.${token.split('.')[1]}`,
    ],
    ['a changed checksum', (token: string) => `${token.split('.')[0]}.AAAAAAAAAAAAAAAA`],
    ['no checksum', (token: string) => token.split('.')[0]],
    ['an extra part', (token: string) => `${token}.x`],
    ['garbage', () => 'not-a-cursor'],
  ])('refuses %s', (_what, alter) => {
    expect(() => decodeCursor(alter(encodeCursor(binding, values)), binding, 2)).toThrow(INVALID);
  });

  it('refuses a well-formed token whose values do not fit the sort', () => {
    const token = encodeCursor(binding, [{ nested: true }, 1] as never);
    expect(() => decodeCursor(token, binding, 2)).toThrow(INVALID);
    expect(() => decodeCursor(encodeCursor(binding, [1]), binding, 2)).toThrow(INVALID);
  });
});
