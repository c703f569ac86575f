import { applyDecorators, SetMetadata, UseGuards } from '@nestjs/common';
import { ApiExtension, ApiResponse, ApiSecurity } from '@nestjs/swagger';
import { BEARER_SECURITY } from '../http/openapi.js';
import { ErrorBodyDto } from '../http/openapi.decorators.js';
import { GrpcAuthGuard } from './grpc-auth.guard.js';
import { HttpAuthGuard } from './http-auth.guard.js';
import { AUTH_REQUIREMENT, type AuthRequirement, type Scope } from './scopes.js';

/**
 * The guards are bound per handler, not globally: a route that declares nothing (health, docs,
 * /private) never runs them, and with AUTH_MODE=none each guarded call costs one early return.
 * Each guard passes the other transport's calls through.
 */
function guarded(requirement: AuthRequirement, documented: MethodDecorator[]) {
  return applyDecorators(
    SetMetadata(AUTH_REQUIREMENT, requirement),
    UseGuards(HttpAuthGuard, GrpcAuthGuard),
    ApiSecurity(BEARER_SECURITY),
    ApiResponse({
      status: 401,
      type: ErrorBodyDto,
      description:
        'No bearer token, or an invalid one (authentication on): `WWW-Authenticate: Bearer realm="users"`, with `error="invalid_token"` when a token was sent',
      example: { error: 'the bearer token has expired' },
    }),
    ...documented,
  );
}

/**
 * The handler needs a valid bearer token carrying `scope` (HTTP and gRPC). Documents the
 * requirement in OpenAPI: the bearer scheme, `x-required-scopes`, and the 401 and 403 answers.
 */
export function RequiredScope(scope: Scope): MethodDecorator & ClassDecorator {
  return guarded({ kind: 'scope', scope }, [
    ApiExtension('x-required-scopes', [scope]),
    ApiResponse({
      status: 403,
      type: ErrorBodyDto,
      description: `The token lacks the scope ${scope}: \`WWW-Authenticate: Bearer error="insufficient_scope", scope="${scope}"\``,
      example: { error: `the bearer token lacks the scope ${scope} this operation needs` },
    }),
  ]);
}

/** The handler needs a valid bearer token, whatever its scopes (/echo, /info). */
export function Authenticated(): MethodDecorator & ClassDecorator {
  return guarded({ kind: 'token' }, [ApiExtension('x-required-scopes', [])]);
}

/**
 * Open to anyone, whether authentication is on or not (health probes). Declares it, so a
 * reader and the coverage test see a choice rather than an omission; binds no guard.
 */
export function Public(): MethodDecorator & ClassDecorator {
  return SetMetadata(AUTH_REQUIREMENT, { kind: 'public' } satisfies AuthRequirement);
}
