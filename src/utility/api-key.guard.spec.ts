import { type ExecutionContext, UnauthorizedException } from '@nestjs/common';
import { AppConfig } from '../config/app-config.js';
import { validateEnv } from '../config/env.validation.js';
import { ApiKeyGuard } from './api-key.guard.js';

function contextWithHeaders(headers: Record<string, string | string[]>): ExecutionContext {
  return {
    switchToHttp: () => ({ getRequest: () => ({ headers }) }),
  } as unknown as ExecutionContext;
}

const guardWithKeys = (keys: string) =>
  new ApiKeyGuard(AppConfig.fromEnv(validateEnv({ API_KEYS: keys })));

describe(ApiKeyGuard.name, () => {
  const guard = guardWithKeys('current-key,previous-key');

  it('refuses a request without a key with 401 (thrown, not false)', () => {
    expect(() => guard.canActivate(contextWithHeaders({}))).toThrow(
      new UnauthorizedException('invalid or missing API key'),
    );
  });

  it('refuses a wrong key, also one of the right length', () => {
    expect(() => guard.canActivate(contextWithHeaders({ 'x-api-key': 'nope' }))).toThrow(
      UnauthorizedException,
    );
    expect(() => guard.canActivate(contextWithHeaders({ 'x-api-key': 'current-kez' }))).toThrow(
      UnauthorizedException,
    );
  });

  it('accepts each configured key (rotation)', () => {
    expect(guard.canActivate(contextWithHeaders({ 'x-api-key': 'current-key' }))).toBe(true);
    expect(guard.canActivate(contextWithHeaders({ 'x-api-key': 'previous-key' }))).toBe(true);
  });

  it('refuses a repeated header and an empty key', () => {
    expect(() => guard.canActivate(contextWithHeaders({ 'x-api-key': ['current-key'] }))).toThrow(
      UnauthorizedException,
    );
    expect(() => guard.canActivate(contextWithHeaders({ 'x-api-key': '' }))).toThrow(
      UnauthorizedException,
    );
  });

  it('refuses everything when no key is configured', () => {
    expect(() => guardWithKeys('').canActivate(contextWithHeaders({ 'x-api-key': '' }))).toThrow(
      UnauthorizedException,
    );
  });
});
