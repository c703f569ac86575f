import {
  JwksServer,
  mint,
  signingKey,
  type SigningKey,
} from '../../test/support/identity-provider.js';
import { jwtVerify } from 'jose';
import { JwksCache, JwksFetchError } from './jwks-cache.js';

describe(JwksCache.name, () => {
  let jwks: JwksServer;
  let known: SigningKey;
  let rotated: SigningKey;
  let now: number;
  let changes: number;
  let cache: JwksCache;

  beforeEach(async () => {
    known = await signingKey('ES256');
    rotated = await signingKey('ES256');
    jwks = await new JwksServer([known]).start();
    now = 1_000_000;
    changes = 0;
    cache = new JwksCache({ url: jwks.url, now: () => now, onChange: () => changes++ });
  });

  afterEach(() => jwks.stop());

  const verify = async (key: SigningKey) => jwtVerify(await mint(key), cache.resolve);

  it('is not ready and resolves no key before a first fetch', async () => {
    expect(cache.ready).toBe(false);
    await expect(verify(known)).rejects.toBeInstanceOf(JwksFetchError);
    await cache.refresh();
    expect(cache.ready).toBe(true);
    await expect(verify(known)).resolves.toBeDefined();
  });

  it('refetches for an unknown kid at most once per 30 s', async () => {
    await cache.refresh();
    jwks.keys = [known, rotated];
    // Within the cooldown of the last fetch: no fetch, the kid stays unknown.
    now += 29_000;
    await expect(verify(rotated)).rejects.toMatchObject({ code: 'ERR_JWKS_NO_MATCHING_KEY' });
    expect(jwks.fetches).toBe(1);
    now += 1000;
    await expect(verify(rotated)).resolves.toBeDefined();
    expect(jwks.fetches).toBe(2);
    expect(changes).toBe(1);
    // Another unknown kid right after: refused without a fetch.
    await expect(verify(await signingKey('ES256'))).rejects.toMatchObject({
      code: 'ERR_JWKS_NO_MATCHING_KEY',
    });
    expect(jwks.fetches).toBe(2);
  });

  it('keeps the keys it has when a refresh fails', async () => {
    await cache.refresh();
    jwks.down = true;
    await expect(cache.refresh()).rejects.toThrow('the key set answered HTTP 503');
    await expect(verify(known)).resolves.toBeDefined();
    expect(changes).toBe(0);
  });

  it('counts failed fetches and remembers when one last succeeded', async () => {
    expect(cache.refreshes).toEqual({ failures: 0 });
    jwks.down = true;
    await expect(cache.refresh()).rejects.toBeInstanceOf(JwksFetchError);
    expect(cache.refreshes).toEqual({ failures: 1 });
    jwks.down = false;
    await cache.refresh();
    expect(cache.refreshes).toEqual({ failures: 1, lastSuccessAt: now });
    now += 600_000;
    jwks.down = true;
    // Joined refreshes are one fetch, so one failure.
    await Promise.all([cache.refresh(), cache.refresh()].map((p) => p.catch(() => undefined)));
    expect(cache.refreshes).toEqual({ failures: 2, lastSuccessAt: now - 600_000 });
  });

  it('joins concurrent refreshes into one fetch, and refuses a body that is no JWKS', async () => {
    await Promise.all([cache.refresh(), cache.refresh(), cache.refresh()]);
    expect(jwks.fetches).toBe(1);
    const notJwks = new JwksCache({ url: jwks.url.replace('/jwks', '/other') });
    await expect(notJwks.refresh()).rejects.toThrow('HTTP 404');
  });
});
