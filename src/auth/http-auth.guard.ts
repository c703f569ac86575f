import {
  type CanActivate,
  type ExecutionContext,
  ForbiddenException,
  Injectable,
  ServiceUnavailableException,
  UnauthorizedException,
} from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request, Response } from 'express';
import { setCaller } from '../observability/caller.js';
import { MetricsService } from '../observability/metrics.service.js';
import { activeSpan } from '../observability/tracing.js';
import { refusalOf } from './auth-errors.js';
import { authorizationValues } from './bearer.js';
import { requirementOf } from './requirement.js';
import { type Caller, TokenVerifierService } from './token-verifier.service.js';

/**
 * Bearer authentication and scopes for HTTP handlers (RFC 6750). Guards run before pipes,
 * interceptors and the handler, so a refused request reads and writes nothing, and a 401 never
 * says whether the resource exists. Answers: 401 with `WWW-Authenticate: Bearer realm="users"`
 * (plus `error="invalid_token"` when a token was sent), 403 naming the scope needed.
 */
@Injectable()
export class HttpAuthGuard implements CanActivate {
  constructor(
    private readonly verifier: TokenVerifierService,
    private readonly reflector: Reflector,
    private readonly metrics: MetricsService,
  ) {}

  /**
   * Synchronous, without a promise, unless a token has to be verified: with authentication off,
   * on a public handler and for a token verified lately (see TokenVerifierService.authorize).
   */
  canActivate(context: ExecutionContext): boolean | Promise<boolean> {
    // Off: nothing to do, and nothing to pay per request.
    if (!this.verifier.enabled || context.getType() !== 'http') return true;
    const requirement = requirementOf(this.reflector, context);
    if (requirement.kind === 'public') return true;
    const http = context.switchToHttp();
    const request = http.getRequest<Request>();
    const refuse = (error: unknown): never => {
      throw this.refusal(error, request, http.getResponse<Response>());
    };
    let outcome: ReturnType<TokenVerifierService['authorize']>;
    try {
      outcome = this.verifier.authorize(authorizationValues(request.rawHeaders), requirement);
    } catch (error) {
      return refuse(error);
    }
    if (outcome instanceof Promise) {
      return outcome.then((caller) => admit(request, caller), refuse);
    }
    return admit(request, outcome);
  }

  private refusal(error: unknown, request: Request, response: Response): unknown {
    const refusal = refusalOf(error);
    if (!refusal) return error;
    const { reason, httpStatus, challenge, message } = refusal;
    setCaller(request, { rejected: reason });
    this.metrics.authRejections.inc({ transport: 'http', status: String(httpStatus), reason });
    if (challenge) response.setHeader('WWW-Authenticate', challenge);
    if (httpStatus === 503) return new ServiceUnavailableException();
    return httpStatus === 403
      ? new ForbiddenException(message)
      : new UnauthorizedException(message);
  }
}

/** Lets the request through, naming its caller for the log line and the span. */
function admit(request: Request, caller: Caller | undefined): true {
  if (caller) {
    setCaller(request, caller);
    if (caller.sub) activeSpan()?.setAttribute('enduser.id', caller.sub);
    if (caller.clientId) activeSpan()?.setAttribute('enduser.client_id', caller.clientId);
  }
  return true;
}
