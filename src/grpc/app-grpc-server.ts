import { type GrpcOptions, ServerGrpc } from '@nestjs/microservices';
import type { sendUnaryData, ServerUnaryCall } from '@grpc/grpc-js';
import { isObservable, lastValueFrom } from 'rxjs';
import { hasProcessingHooks } from '../internals/nest-grpc.js';
import type { DirectGrpcMethods, DirectUnaryHandler } from './direct-grpc-methods.js';
import { type GrpcObservability, shedCode } from './grpc-observability.js';
import type { AdmissionController } from '../overload/admission.js';
import { admitGrpcCalls } from '../overload/grpc-admission.js';
import type { OverloadMetrics } from '../overload/overload.metrics.js';

/** Admission in front of every method of the app's services (src/overload/). */
export interface GrpcAdmission {
  controller: AdmissionController;
  metrics: OverloadMetrics;
  retryAfterS: number;
  /** The most rejections held for peers that came straight back. */
  maxHeld: number;
  /** Where a turned-away call is counted, as every other call is. */
  observability: GrpcObservability;
}

/** What Nest hands a transport for each method: guards, pipes and filters around the handler. */
type MethodHandler = (request: unknown, metadata: unknown, call: unknown) => Promise<unknown>;
/** A unary method as grpc-js calls it. */
type UnaryMethod = (
  call: ServerUnaryCall<unknown, unknown>,
  callback: sendUnaryData<unknown>,
) => Promise<void> | void;

/**
 * Nest's gRPC transport, with two shortcuts for unary calls, measured in bench/README.md:
 *
 * - A method declared with `@DirectGrpcMethod` is answered by its direct handler
 *   (DirectGrpcMethods): its guards, then the method, errors through GrpcExceptionsFilter.
 * - Any other unary method runs the handler Nest built (its guards, pipes, interceptors and
 *   filters) and sends its value, without Nest's RxJS wrapping: Nest's own path copies every call
 *   (`{ ...call }`) for the processing hooks, then turns the handler's promise into an Observable
 *   (fromPromise, mergeMap, finalize) and subscribes to it. An exception filter's answer is an
 *   Observable that errors: it is read as such.
 *
 * Streaming methods, and unary calls when processing hooks are set (none is, in this app), take
 * Nest's own path unchanged.
 */
export class AppGrpcServer extends ServerGrpc {
  constructor(
    options: GrpcOptions['options'],
    private readonly direct?: DirectGrpcMethods,
    private readonly admission?: GrpcAdmission,
  ) {
    super(options);
  }

  override async createService(
    grpcService: { prototype: Record<string, { responseStream?: boolean }> },
    name: string,
  ): Promise<Record<string, unknown>> {
    const service = (await super.createService(grpcService, name)) as Record<string, unknown>;
    for (const method of Object.keys(service)) {
      const handler = this.direct?.find(name, method);
      if (handler) service[method] = this.directMethod(handler, service[method] as UnaryMethod);
    }
    if (this.admission) {
      const { controller, metrics, retryAfterS, maxHeld, observability } = this.admission;
      const streaming = (method: string) => grpcService.prototype[method]?.responseStream === true;
      admitGrpcCalls(
        service,
        streaming,
        controller,
        metrics,
        retryAfterS,
        maxHeld,
        (method, reason, call, started) =>
          observability.method(`users.${name}`, method).counted(started, shedCode(reason, call)),
      );
    }
    return service;
  }

  override createUnaryServiceMethod(methodHandler: MethodHandler): UnaryMethod {
    return this.unaryMethod(
      (call) =>
        methodHandler(call.request, call.metadata, call).then((value) =>
          isObservable(value) ? lastValueFrom(value) : value,
        ),
      super.createUnaryServiceMethod(methodHandler) as UnaryMethod,
    );
  }

  private directMethod(handler: DirectUnaryHandler, nestPath: UnaryMethod): UnaryMethod {
    const direct = this.direct!;
    return this.unaryMethod(
      (call) => handler(call.request, call.metadata, call),
      nestPath,
      (error) => direct.statusOf(error),
    );
  }

  /**
   * A unary method answered with `answer`'s value, or with its error as `statusOf` makes it;
   * by Nest's own path instead while processing hooks are set.
   */
  private unaryMethod(
    answer: (call: ServerUnaryCall<unknown, unknown>) => Promise<unknown>,
    nestPath: UnaryMethod,
    statusOf: (error: unknown) => unknown = (error) => error,
  ): UnaryMethod {
    return (call, callback) => {
      if (hasProcessingHooks(this)) return nestPath(call, callback);
      answer(call).then(
        (reply) => callback(null, reply),
        (error: unknown) => callback(statusOf(error) as Error),
      );
    };
  }
}
