import {
  createLocalJWKSet,
  type CryptoKey,
  type FlattenedJWSInput,
  type JSONWebKeySet,
  type JWSHeaderParameters,
} from 'jose';

export interface JwksCacheOptions {
  url: string;
  /** A fetch that takes longer fails (and the keys in hand stay). */
  timeoutMs?: number;
  /** At most one fetch per this long for a token whose `kid` is unknown. */
  unknownKidCooldownMs?: number;
  /** Called when the key set changes (verified tokens signed by a removed key must go). */
  onChange?: () => void;
  now?: () => number;
}

/** How fetching the key set has gone so far (read by the metrics when scraped). */
export interface JwksRefreshes {
  /** Fetches that failed (timer, boot and unknown-kid fetches alike). */
  failures: number;
  /** When a fetch last succeeded (ms since the epoch); undefined until one has. */
  lastSuccessAt?: number;
}

/** The key set could not be fetched: the cache keeps what it had. */
export class JwksFetchError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'JwksFetchError';
  }
}

/**
 * The identity provider's signing keys (a JWKS at AUTH_JWKS_URL), held in memory and handed to
 * jose's `jwtVerify` as a key resolver. Unlike jose's createRemoteJWKSet it fetches eagerly (so
 * readiness can wait for the first set), refreshes on a timer the caller drives, and keeps the
 * keys it has when a refresh fails. A token naming an unknown `kid` (the provider has rotated in
 * a new key) triggers one refetch, at most once per cooldown, so a flood of forged kids cannot
 * turn into a flood of requests to the provider.
 */
export class JwksCache {
  private keys?: ReturnType<typeof createLocalJWKSet>;
  private fingerprint = '';
  private lastFetchAt = Number.NEGATIVE_INFINITY;
  private inFlight?: Promise<void>;
  private readonly counts: JwksRefreshes = { failures: 0 };
  private readonly timeoutMs: number;
  private readonly cooldownMs: number;
  private readonly now: () => number;

  constructor(private readonly options: JwksCacheOptions) {
    this.timeoutMs = options.timeoutMs ?? 5000;
    this.cooldownMs = options.unknownKidCooldownMs ?? 30_000;
    this.now = options.now ?? Date.now;
  }

  /** True once a key set has been fetched. */
  get ready(): boolean {
    return this.keys !== undefined;
  }

  /** Counts of the fetches so far: a copy, for the metrics. */
  get refreshes(): JwksRefreshes {
    return { ...this.counts };
  }

  /** Fetches the key set now (joining a fetch already running); throws JwksFetchError. */
  refresh(): Promise<void> {
    this.inFlight ??= this.fetchKeys()
      .then(
        () => {
          this.counts.lastSuccessAt = this.now();
        },
        (error: unknown) => {
          this.counts.failures++;
          throw error;
        },
      )
      .finally(() => (this.inFlight = undefined));
    return this.inFlight;
  }

  /** The key resolver for jwtVerify. Throws jose's JWKSNoMatchingKey for an unknown kid. */
  readonly resolve = async (
    header: JWSHeaderParameters,
    token: FlattenedJWSInput,
  ): Promise<CryptoKey> => {
    const keys = this.keys;
    if (!keys) throw new JwksFetchError('no signing keys fetched yet');
    try {
      return await keys(header, token);
    } catch (error) {
      if ((error as { code?: string }).code !== 'ERR_JWKS_NO_MATCHING_KEY') throw error;
      if (this.now() - this.lastFetchAt < this.cooldownMs) throw error;
      try {
        await this.refresh();
      } catch {
        throw error; // the provider is away: the kid stays unknown
      }
      return this.keys!(header, token);
    }
  };

  private async fetchKeys(): Promise<void> {
    this.lastFetchAt = this.now();
    let body: unknown;
    try {
      const response = await fetch(this.options.url, {
        headers: { accept: 'application/json' },
        redirect: 'error',
        signal: AbortSignal.timeout(this.timeoutMs),
      });
      if (!response.ok) throw new JwksFetchError(`the key set answered HTTP ${response.status}`);
      body = await response.json();
    } catch (error) {
      if (error instanceof JwksFetchError) throw error;
      throw new JwksFetchError(`the key set could not be fetched: ${describe(error)}`, {
        cause: error,
      });
    }
    if (!isKeySet(body)) throw new JwksFetchError('the key set is not a JWKS ({"keys": [...]})');
    const keys = createLocalJWKSet(body);
    const fingerprint = JSON.stringify(body.keys);
    const changed = this.keys !== undefined && fingerprint !== this.fingerprint;
    this.keys = keys;
    this.fingerprint = fingerprint;
    if (changed) this.options.onChange?.();
  }
}

function isKeySet(value: unknown): value is JSONWebKeySet {
  const keys = (value as { keys?: unknown } | null)?.keys;
  return Array.isArray(keys) && keys.every((key) => typeof key === 'object' && key !== null);
}

function describe(error: unknown): string {
  if (error instanceof Error && error.name === 'TimeoutError') return 'timed out';
  const cause = (error as { cause?: { code?: string } }).cause?.code;
  return cause ?? (error instanceof Error ? error.message : String(error));
}
