import { type ExecutionContext, ForbiddenException } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request, Response } from 'express';
import { callerOf } from '../observability/caller.js';
import type { MetricsService } from '../observability/metrics.service.js';
import { HttpAuthGuard } from './http-auth.guard.js';
import { AUTH_REQUIREMENT } from './scopes.js';
import { InsufficientScopeError } from './auth-errors.js';
import { type Caller, type TokenVerifierService } from './token-verifier.service.js';

class Controller {
  read(): void {}
}
Reflect.defineMetadata(
  AUTH_REQUIREMENT,
  { kind: 'scope', scope: 'users:read' },
  Controller.prototype.read,
);

function call() {
  const request = { rawHeaders: ['Authorization', 'Bearer t'] } as unknown as Request;
  const headers = new Map<string, unknown>();
  const response = { setHeader: (name: string, value: unknown) => headers.set(name, value) };
  const context = {
    getType: () => 'http',
    getHandler: () => Controller.prototype.read,
    getClass: () => Controller,
    switchToHttp: () => ({
      getRequest: () => request,
      getResponse: () => response as unknown as Response,
    }),
  } as unknown as ExecutionContext;
  return { request, headers, context };
}

const guardWith = (enabled: boolean, authorize: TokenVerifierService['authorize']) =>
  new HttpAuthGuard({ enabled, authorize } as TokenVerifierService, new Reflector(), {
    authRejections: { inc: () => undefined },
  } as unknown as MetricsService);

const ADA: Caller = { sub: 'ada', clientId: 'web' };

describe(HttpAuthGuard.name, () => {
  it('lets every request through at once, without a promise, when authentication is off', () => {
    const guard = guardWith(false, () => {
      throw new Error('not called');
    });
    expect(guard.canActivate(call().context)).toBe(true);
  });

  it('answers at once when the verifier knows the token, naming the caller', () => {
    const { request, context } = call();
    expect(guardWith(true, () => ADA).canActivate(context)).toBe(true);
    expect(callerOf(request)).toBe(ADA);
  });

  it('waits for the verifier when it has a new token to check', async () => {
    const { request, context } = call();
    const outcome = guardWith(true, () => Promise.resolve(ADA)).canActivate(context);
    expect(outcome).toBeInstanceOf(Promise);
    expect(await outcome).toBe(true);
    expect(callerOf(request)).toBe(ADA);
  });

  it('refuses a known token without the scope at once: 403 naming the scope', () => {
    const { request, headers, context } = call();
    const guard = guardWith(true, () => {
      throw new InsufficientScopeError('users:read');
    });
    expect(() => guard.canActivate(context)).toThrow(ForbiddenException);
    expect(headers.get('WWW-Authenticate')).toBe(
      'Bearer error="insufficient_scope", scope="users:read"',
    );
    expect(callerOf(request)).toEqual({ rejected: 'insufficient_scope' });
  });
});
