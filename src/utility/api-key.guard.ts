import {
  type CanActivate,
  type ExecutionContext,
  Injectable,
  Logger,
  UnauthorizedException,
} from '@nestjs/common';
import { createHash, timingSafeEqual } from 'node:crypto';
import type { Request } from 'express';
import { AppConfig } from '../config/app-config.js';

const digest = (value: string): Buffer => createHash('sha256').update(value, 'utf8').digest();

/**
 * Lets a request through when its `x-api-key` header equals one of API_KEYS (several keys allow
 * rotation without downtime). Keys are compared as SHA-256 digests with timingSafeEqual: equal
 * lengths always, so neither a key's content nor its length leaks through timing, and every
 * configured key is checked, not just up to the first match.
 */
@Injectable()
export class ApiKeyGuard implements CanActivate {
  private readonly logger = new Logger(ApiKeyGuard.name);
  private readonly keys: Buffer[];

  constructor(config: AppConfig) {
    this.keys = config.apiKeys.map(digest);
    if (this.keys.length === 0) {
      this.logger.warn('API_KEYS is not set: every request to /private will be refused with 401');
    }
  }

  canActivate(context: ExecutionContext): boolean {
    const presented = context.switchToHttp().getRequest<Request>().headers['x-api-key'];
    if (typeof presented === 'string' && this.matches(digest(presented))) return true;
    // Thrown rather than returning false, which Nest would answer with 403.
    throw new UnauthorizedException('invalid or missing API key');
  }

  private matches(presented: Buffer): boolean {
    let matched = false;
    for (const key of this.keys) matched = timingSafeEqual(key, presented) || matched;
    return matched;
  }
}
