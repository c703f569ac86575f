import { hash } from 'node:crypto';

/** What the service keeps of a verified token: never the token itself. */
export interface VerifiedToken {
  sub?: string;
  /** `azp` (OpenID Connect) or `client_id` (RFC 9068): the client the token was issued to. */
  clientId?: string;
  scopes: ReadonlySet<string>;
  /** Until when (ms since the epoch) the token stays valid: exp plus the clock tolerance. */
  validUntil: number;
}

/**
 * Tokens verified lately, so a client repeating its token costs one hash and a map lookup
 * instead of a signature check. Bounded: past `maxEntries` the least recently used entry goes.
 * Keyed by the SHA-256 of the token, so the raw token is never held beyond the request.
 */
export class VerifiedTokens {
  private readonly entries = new Map<string, VerifiedToken>();

  constructor(
    readonly maxEntries = 10_000,
    private readonly now: () => number = Date.now,
  ) {}

  get size(): number {
    return this.entries.size;
  }

  /** One-shot hashing: no Hash object per lookup (this runs on every authenticated request). */
  static keyOf(token: string): string {
    return hash('sha256', token, 'base64url');
  }

  get(key: string): VerifiedToken | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    this.entries.delete(key);
    if (entry.validUntil <= this.now()) return undefined;
    // Map keeps insertion order: re-inserting makes this entry the most recently used.
    this.entries.set(key, entry);
    return entry;
  }

  set(key: string, entry: VerifiedToken): void {
    this.entries.delete(key);
    this.entries.set(key, entry);
    if (this.entries.size > this.maxEntries) {
      this.entries.delete(this.entries.keys().next().value!);
    }
  }

  clear(): void {
    this.entries.clear();
  }
}
