import { type CanActivate, type ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { RpcException } from '@nestjs/microservices';
import { type Metadata, status } from '@grpc/grpc-js';
import { getRpcInfo } from 'nestjs-pino';
import { GrpcObservability } from '../grpc/grpc-observability.js';
import { setCaller } from '../observability/caller.js';
import { MetricsService } from '../observability/metrics.service.js';
import { activeSpan } from '../observability/tracing.js';
import { refusalOf } from './auth-errors.js';
import { requirementOf } from './requirement.js';
import { type Caller, TokenVerifierService } from './token-verifier.service.js';

/**
 * Bearer authentication and scopes for gRPC handlers: the token comes in the `authorization`
 * metadata. Refusals are UNAUTHENTICATED (no or invalid token) and PERMISSION_DENIED (scope).
 * A refused call never reaches the handler, so its log line and its grpc_server_handled_total
 * sample are recorded here, through the method's GrpcObservability.
 */
@Injectable()
export class GrpcAuthGuard implements CanActivate {
  constructor(
    private readonly verifier: TokenVerifierService,
    private readonly reflector: Reflector,
    private readonly metrics: MetricsService,
    private readonly observability: GrpcObservability,
  ) {}

  /**
   * Synchronous, without a promise, unless a token has to be verified: with authentication off,
   * on a public handler and for a token verified lately (see TokenVerifierService.authorize).
   */
  canActivate(context: ExecutionContext): boolean | Promise<boolean> {
    if (!this.verifier.enabled || context.getType() !== 'rpc') return true;
    const requirement = requirementOf(this.reflector, context);
    if (requirement.kind === 'public') return true;
    const started = process.hrtime.bigint();
    const metadata = context.switchToRpc().getContext<Metadata>();
    // Nest calls a gRPC handler with (request, metadata, call).
    const call = context.getArgByIndex<object | undefined>(2);
    const refuse = (error: unknown): never => {
      throw this.refusal(error, context, started);
    };
    let outcome: ReturnType<TokenVerifierService['authorize']>;
    try {
      const values = (metadata?.get?.('authorization') ?? []).map(String);
      outcome = this.verifier.authorize(values, requirement);
    } catch (error) {
      return refuse(error);
    }
    if (outcome instanceof Promise) return outcome.then((caller) => admit(call, caller), refuse);
    return admit(call, outcome);
  }

  private refusal(error: unknown, context: ExecutionContext, started: bigint): unknown {
    const refusal = refusalOf(error);
    if (!refusal) return error;
    const { reason, grpcCode: code, message } = refusal;
    this.metrics.authRejections.inc({ transport: 'grpc', status: status[code], reason });
    const pattern = getRpcInfo(context).pattern as { service?: string; rpc?: string } | undefined;
    this.observability
      .method(`users.${pattern?.service ?? 'unknown'}`, pattern?.rpc ?? 'unknown')
      .refused(started, code, { auth: { rejected: reason } });
    return new RpcException({ code, message });
  }
}

/** Lets the call through, naming its caller for the log line and the span. */
function admit(call: object | undefined, caller: Caller | undefined): true {
  if (caller && call) setCaller(call, caller);
  if (caller?.sub) activeSpan()?.setAttribute('enduser.id', caller.sub);
  if (caller?.clientId) activeSpan()?.setAttribute('enduser.client_id', caller.clientId);
  return true;
}
