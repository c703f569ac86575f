import { VerifiedTokens, type VerifiedToken } from './verified-tokens.js';

const entry = (validUntil: number): VerifiedToken => ({ sub: 's', scopes: new Set(), validUntil });

describe(VerifiedTokens.name, () => {
  it('keys entries by a SHA-256 of the token, never the token itself', () => {
    const key = VerifiedTokens.keyOf('header.payload.signature');
    expect(key).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(key).not.toContain('payload');
  });

  it('forgets an entry once the token has expired', () => {
    let now = 1000;
    const cache = new VerifiedTokens(10, () => now);
    cache.set('a', entry(2000));
    expect(cache.get('a')).toBeDefined();
    now = 2000;
    expect(cache.get('a')).toBeUndefined();
    expect(cache.size).toBe(0);
  });

  it('holds at most maxEntries, dropping the least recently used', () => {
    const cache = new VerifiedTokens(2, () => 0);
    cache.set('a', entry(1));
    cache.set('b', entry(1));
    cache.get('a');
    cache.set('c', entry(1));
    expect([cache.get('a'), cache.get('b'), cache.get('c')].map(Boolean)).toEqual([
      true,
      false,
      true,
    ]);
    expect(cache.size).toBe(2);
  });
});
