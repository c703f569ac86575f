import {
  Inject,
  Injectable,
  Optional,
  type OnApplicationShutdown,
  type OnModuleInit,
} from '@nestjs/common';
import { jwtVerify, type JWTPayload } from 'jose';
import type { Logger } from 'pino';
import { AppConfig, type AuthSettings } from '../config/app-config.js';
import { ROOT_LOGGER } from '../observability/logging.js';
import { MetricsService } from '../observability/metrics.service.js';
import {
  AuthenticationError,
  InsufficientScopeError,
  KeysUnavailableError,
  type RejectionReason,
} from './auth-errors.js';
import { bearerToken } from './bearer.js';
import { JwksCache, JwksFetchError, type JwksRefreshes } from './jwks-cache.js';
import { grantedScopes, type AuthRequirement } from './scopes.js';
import { VerifiedTokens, type VerifiedToken } from './verified-tokens.js';

/** Who called, as the logs and spans name them. */
export interface Caller {
  sub?: string;
  clientId?: string;
}

/** Entries of the verified-token cache (about 300 bytes each, so about 3 MB at most). */
const VERIFIED_TOKENS_MAX = 10_000;
const BOOT_RETRY_MIN_MS = 250;
const BOOT_RETRY_MAX_MS = 5000;

/** jose's error codes, mapped to the reasons the service reports. */
const JOSE_REASONS: Record<string, RejectionReason> = {
  ERR_JOSE_ALG_NOT_ALLOWED: 'algorithm',
  ERR_JOSE_NOT_SUPPORTED: 'algorithm',
  ERR_JWKS_NO_MATCHING_KEY: 'unknown_key',
  ERR_JWKS_MULTIPLE_MATCHING_KEYS: 'unknown_key',
  ERR_JWS_SIGNATURE_VERIFICATION_FAILED: 'signature',
  ERR_JWT_EXPIRED: 'expired',
};
const CLAIM_REASONS: Record<string, RejectionReason> = {
  iss: 'issuer',
  aud: 'audience',
  nbf: 'not_yet_valid',
};

/**
 * Verifies bearer tokens (JWTs) with jose against the identity provider's key set, and decides
 * whether a caller meets a handler's requirement. Shared by the HTTP and gRPC guards. Off
 * (`enabled` false) unless AUTH_MODE is jwt; then it fetches the key set at boot (readiness
 * waits for it) and every AUTH_JWKS_REFRESH_S.
 */
@Injectable()
export class TokenVerifierService implements OnModuleInit, OnApplicationShutdown {
  readonly enabled: boolean;
  private readonly settings: AuthSettings;
  private readonly jwks?: JwksCache;
  private readonly verified = new VerifiedTokens(VERIFIED_TOKENS_MAX);
  private refreshTimer?: NodeJS.Timeout;
  private bootTimer?: NodeJS.Timeout;
  private stopped = false;
  private readonly production: boolean;

  constructor(
    config: AppConfig,
    @Inject(ROOT_LOGGER) private readonly logger: Logger,
    @Optional() metrics?: MetricsService,
  ) {
    metrics?.readKeyRefreshesFrom(() => this.keyRefreshes);
    this.settings = config.auth;
    this.enabled = config.auth.mode === 'jwt';
    if (this.enabled) {
      this.jwks = new JwksCache({
        url: this.settings.jwksUrl!,
        // A removed key must stop verifying at once, even for tokens verified before.
        onChange: () => this.verified.clear(),
      });
    }
    this.production = config.production;
  }

  /** Whether the service can verify tokens: always when off, else once keys are in hand. */
  get ready(): boolean {
    return !this.enabled || this.jwks!.ready;
  }

  /** How refreshing the key set has gone: no failure and no success while authentication is off. */
  get keyRefreshes(): JwksRefreshes {
    return this.jwks?.refreshes ?? { failures: 0 };
  }

  onModuleInit(): void {
    if (!this.enabled) {
      // In production AUTH_MODE=none is explicit (validateEnv): say what it means.
      if (this.production) {
        this.logger.warn(
          { context: 'Auth' },
          'AUTH_MODE=none: requests are not authenticated; the mesh decides who may call',
        );
      } else {
        this.logger.info({ context: 'Auth' }, 'authentication off (AUTH_MODE=none)');
      }
      return;
    }
    const { issuer, audience, algorithms, jwksUrl } = this.settings;
    this.logger.info(
      { context: 'Auth', issuer, audience, algorithms, jwksUrl },
      'authentication on: bearer tokens (JWT) required',
    );
    void this.fetchUntilReady(BOOT_RETRY_MIN_MS);
    this.refreshTimer = setInterval(() => void this.refresh(), this.settings.jwksRefreshS * 1000);
    this.refreshTimer.unref();
  }

  onApplicationShutdown(): void {
    this.stopped = true;
    clearInterval(this.refreshTimer);
    clearTimeout(this.bootTimer);
  }

  /**
   * The caller of a request carrying these Authorization values, if it meets the requirement.
   * A token verified lately (a client repeating its token, the common case) is answered at once,
   * without a promise; a new one once its signature is checked. Throws, or rejects with,
   * AuthenticationError (401), InsufficientScopeError (403) or KeysUnavailableError.
   */
  authorize(
    authorization: readonly string[],
    requirement: AuthRequirement,
  ): Caller | undefined | Promise<Caller | undefined> {
    if (requirement.kind === 'public') return undefined;
    const token = bearerToken(authorization);
    const key = VerifiedTokens.keyOf(token);
    const known = this.verified.get(key);
    if (known) return callerMeeting(known, requirement);
    return this.verifyNew(token, key).then((verified) => callerMeeting(verified, requirement));
  }

  /** Checks a token not in the cache (its signature and claims), and caches it under `key`. */
  private async verifyNew(token: string, key: string): Promise<VerifiedToken> {
    if (!this.jwks?.ready) throw new KeysUnavailableError();
    const { issuer, audience, algorithms, clockToleranceS } = this.settings;
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(token, this.jwks.resolve, {
        algorithms: [...algorithms],
        issuer,
        audience,
        clockTolerance: clockToleranceS,
        requiredClaims: ['exp'],
      }));
    } catch (error) {
      throw new AuthenticationError(reasonOf(error));
    }
    const verified: VerifiedToken = {
      sub: typeof payload.sub === 'string' ? payload.sub : undefined,
      clientId: stringClaim(payload.azp) ?? stringClaim(payload.client_id),
      scopes: grantedScopes(payload),
      validUntil: (payload.exp! + clockToleranceS) * 1000,
    };
    this.verified.set(key, verified);
    return verified;
  }

  /** One refresh of the key set; a failure keeps the keys in hand and is logged. */
  async refresh(): Promise<boolean> {
    try {
      await this.jwks!.refresh();
      return true;
    } catch (error) {
      this.logger.warn(
        { context: 'Auth', err: { message: (error as Error).message } },
        `refreshing the token signing keys failed; keeping the ${this.jwks!.ready ? 'keys in hand' : 'service not ready'}`,
      );
      return false;
    }
  }

  /** At boot: retry with a growing delay (at most BOOT_RETRY_MAX_MS) until a key set arrives. */
  private async fetchUntilReady(delayMs: number): Promise<void> {
    if (this.stopped || this.jwks!.ready) return;
    if (await this.refresh()) {
      this.logger.info({ context: 'Auth' }, 'token signing keys fetched');
      return;
    }
    if (this.stopped || this.jwks!.ready) return;
    this.bootTimer = setTimeout(
      () => void this.fetchUntilReady(Math.min(delayMs * 2, BOOT_RETRY_MAX_MS)),
      delayMs,
    );
    this.bootTimer.unref();
  }
}

/** The caller a verified token names, if it carries the scope the requirement asks for. */
function callerMeeting(token: VerifiedToken, requirement: AuthRequirement): Caller {
  if (requirement.kind === 'scope' && !token.scopes.has(requirement.scope)) {
    throw new InsufficientScopeError(requirement.scope);
  }
  return { sub: token.sub, clientId: token.clientId };
}

function stringClaim(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

function reasonOf(error: unknown): RejectionReason {
  if (error instanceof JwksFetchError) return 'unknown_key';
  const { code, claim } = error as { code?: string; claim?: string };
  if (code === 'ERR_JWT_CLAIM_VALIDATION_FAILED') return CLAIM_REASONS[claim ?? ''] ?? 'claims';
  return JOSE_REASONS[code ?? ''] ?? 'invalid';
}
