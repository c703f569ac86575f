import { InvalidArgumentError } from '../common/errors.js';
import { encodeCursor } from '../lists/list-cursor.js';
import { decodeChangeToken, encodeChangeToken, INVALID_TOKEN, isAfter } from './change-token.js';

const INVALID = new InvalidArgumentError(INVALID_TOKEN);

describe(encodeChangeToken.name, () => {
  it('round-trips a key through a URL-safe token, 64-bit positions included', () => {
    for (const key of [
      { position: 0n, id: 0n },
      { position: 756n, id: 42n },
      { position: 2n ** 63n - 1n, id: 2n ** 53n + 1n },
    ]) {
      const token = encodeChangeToken(key);
      expect(token).toMatch(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{16}$/);
      expect(decodeChangeToken(token)).toEqual(key);
    }
  });

  it.each([
    ['garbage', 'not-a-token'],
    [
      'a changed checksum',
      `${encodeChangeToken({ position: 1n, id: 1n }).split('.')[0]}.AAAAAAAAAAAAAAAA`,
    ],
    ['a list cursor', encodeCursor('users sort=ASC id', [7])],
    ['a negative position', encodeCursor('users/changes', ['-1', '0'])],
    ['a number instead of digits', encodeCursor('users/changes', [1, 0])],
    ['a leading zero', encodeCursor('users/changes', ['01', '0'])],
    ['a position past 64 bits', encodeCursor('users/changes', [(2n ** 63n).toString(), '0'])],
    ['a third value', encodeCursor('users/changes', ['1', '1', '1'])],
  ])('refuses %s', (_what, token) => {
    expect(() => decodeChangeToken(token)).toThrow(INVALID);
  });
});

describe(isAfter.name, () => {
  it('orders by position, then id', () => {
    expect(isAfter({ position: 2n, id: 1n }, { position: 1n, id: 9n })).toBe(true);
    expect(isAfter({ position: 2n, id: 2n }, { position: 2n, id: 1n })).toBe(true);
    expect(isAfter({ position: 2n, id: 1n }, { position: 2n, id: 1n })).toBe(false);
    expect(isAfter({ position: 1n, id: 9n }, { position: 2n, id: 0n })).toBe(false);
  });
});
