import { createHash, timingSafeEqual } from 'node:crypto';
import { type CanActivate, type ExecutionContext, Injectable } from '@nestjs/common';
import type { Request } from 'express';
import { authorizationValues, bearerToken } from '../auth/bearer.js';
import { HttpAuthGuard } from '../auth/http-auth.guard.js';
import { AppConfig } from '../config/app-config.js';
import { setCaller } from '../observability/caller.js';

/**
 * Who may call /scim/v2: a static provider token whose SHA-256 is in SCIM_TOKEN_SHA256 (for
 * providers that can only send a secret), else a JWT with the scope `scim` (HttpAuthGuard, with
 * the controller's requirement). With authentication off (AUTH_MODE=none) the routes are open,
 * as every other route is, whether or not provider tokens are configured; a provider token sent
 * then still names the caller in the logs. The token itself is never logged.
 */
@Injectable()
export class ScimAuthGuard implements CanActivate {
  private readonly digests: Buffer[];

  constructor(
    config: AppConfig,
    private readonly jwt: HttpAuthGuard,
  ) {
    this.digests = config.scimTokenDigests.map((digest) => Buffer.from(digest, 'hex'));
  }

  canActivate(context: ExecutionContext): boolean | Promise<boolean> {
    if (this.digests.length > 0) {
      const request = context.switchToHttp().getRequest<Request>();
      if (this.isProviderToken(request)) {
        setCaller(request, { sub: 'scim-provider-token' });
        return true;
      }
    }
    // A JWT with the scope scim; with authentication off, anyone.
    return this.jwt.canActivate(context);
  }

  private isProviderToken(request: Request): boolean {
    let token: string;
    try {
      token = bearerToken(authorizationValues(request.rawHeaders));
    } catch {
      return false;
    }
    const digest = createHash('sha256').update(token).digest();
    return this.digests.some((known) => timingSafeEqual(known, digest));
  }
}
