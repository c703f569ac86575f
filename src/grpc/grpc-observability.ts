import { Inject, Injectable } from '@nestjs/common';
import { Metadata, type ServerUnaryCall, status } from '@grpc/grpc-js';
import { RpcException } from '@nestjs/microservices';
import type { Logger } from 'pino';
import { toGrpcError } from './grpc-exceptions.filter.js';
import { requestIdFrom } from '../common/request-id.js';
import { callerOf } from '../observability/caller.js';
import { ROOT_LOGGER } from '../observability/logging.js';
import type { RejectReason } from '../overload/work-class.js';
import { MetricsService } from '../observability/metrics.service.js';
import { activeSpan } from '../observability/tracing.js';

/**
 * What one method's calls ending with one status code share, built on its first call: the metric
 * children (no label lookup per call) and a child logger whose `grpc` field is serialized once.
 */
interface Outcome {
  message: string;
  handled: { inc(): void };
  seconds: { observe(value: number): void };
  logger: Logger;
}

/** The call's deadline has passed (grpc-js gives Infinity when the caller set none). */
function deadlinePassed(call: ServerUnaryCall<unknown, unknown>): boolean {
  const deadline = call.getDeadline();
  return (deadline instanceof Date ? deadline.getTime() : deadline) <= Date.now();
}

/**
 * The code the caller saw. Once a call is cancelled grpc-js has already answered it:
 * DEADLINE_EXCEEDED when its deadline passed, else CANCELLED; the handler's own OK or CANCELLED
 * never reached it. A failure of the handler's keeps its code, which says more.
 */
export function answeredCode(call: ServerUnaryCall<unknown, unknown>, code: status): status {
  if (!call.cancelled || (code !== status.OK && code !== status.CANCELLED)) return code;
  return deadlinePassed(call) ? status.DEADLINE_EXCEEDED : status.CANCELLED;
}

/**
 * The code a caller sees when admission turns its call away for `reason` (src/overload/): an
 * expired deadline is DEADLINE_EXCEEDED, a call its caller gave up is what answeredCode says,
 * and a shed call is UNAVAILABLE.
 */
export function shedCode(reason: RejectReason, call: ServerUnaryCall<unknown, unknown>): status {
  if (reason === 'deadline') return status.DEADLINE_EXCEEDED;
  if (reason === 'client_gone') return answeredCode(call, status.CANCELLED);
  return status.UNAVAILABLE;
}

/**
 * One log line and one metric sample per call of a gRPC method: method, status code as the
 * caller saw it (answeredCode), duration, request id and, with authentication on, the caller.
 * The request id goes back in the response metadata (`x-request-id`), as HTTP sends it back in a
 * header, and onto the call's span when tracing is on. Calls the guard refuses never reach the
 * handler: the guard records those through `refused`, so the SLIs count them too.
 *
 * A plain async wrapper the handler runs its work in, rather than a Nest interceptor: Nest runs
 * every interceptor through an RxJS pipeline per call (defer, mergeAll, an async resource each),
 * which cost more CPU than the handler's own work apart from its query (bench/README.md).
 */
export class ObservedGrpcMethod {
  /** `users.Users/GetUser`: the method's full name, as the log line and the span name it. */
  private readonly fullName: string;
  /** Per status code, built on first use. */
  private readonly outcomes = new Map<status, Outcome>();

  constructor(
    private readonly logger: Logger,
    private readonly metrics: MetricsService,
    private readonly service: string,
    private readonly method: string,
  ) {
    this.fullName = `${service}/${method}`;
  }

  /** Runs `work`, the handler's work for this call, and records the call's outcome. */
  async run<T>(
    metadata: Metadata,
    call: ServerUnaryCall<unknown, unknown>,
    work: () => Promise<T>,
  ): Promise<T> {
    const started = process.hrtime.bigint();
    const requestId = requestIdFrom(metadata.get('x-request-id')[0]);
    // The instrumentation names the span `grpc.users.Users/GetUser`; the full name is the norm.
    // (The call's log line gets trace_id and span_id from the logger's mixin: it runs in the span.)
    activeSpan()?.updateName(this.fullName).setAttribute('rpc.request_id', requestId);
    let reply: T;
    try {
      reply = await work();
    } catch (error) {
      // Mapped once, here: the exception filter passes an RpcException's status on as it is.
      const mapped = toGrpcError(error);
      this.record(call, requestId, started, mapped.code, error);
      throw new RpcException(mapped);
    }
    this.record(call, requestId, started, status.OK);
    return reply;
  }

  /** Records a call the authentication guard refused with `code`, `fields` saying why. */
  refused(started: bigint, code: status, fields: object): void {
    this.counted(started, code);
    const { logger, message } = this.outcomeOf(code);
    logger.info(fields, message);
  }

  /**
   * Counts a call that ended with `code` before its handler ran, without a log line: what
   * admission turns away (shedCode), which overload_rejected_total also counts, by reason; a
   * flood would otherwise log thousands of lines a second.
   */
  counted(started: bigint, code: status): void {
    const { handled, seconds } = this.outcomeOf(code);
    handled.inc();
    seconds.observe(Number(process.hrtime.bigint() - started) / 1e9);
  }

  private record(
    call: ServerUnaryCall<unknown, unknown>,
    requestId: string,
    started: bigint,
    handlerCode: status,
    error?: unknown,
  ): void {
    const code = answeredCode(call, handlerCode);
    // The request id goes out with the answer (in the same write as the message or the status,
    // where sending it before the query would cost a frame and a write of its own).
    const headers = new Metadata();
    headers.set('x-request-id', requestId);
    call.sendMetadata(headers);
    const durationMs = Number(process.hrtime.bigint() - started) / 1e6;
    const outcome = this.outcomeOf(code);
    outcome.handled.inc();
    outcome.seconds.observe(durationMs / 1000);
    const line = {
      requestId,
      durationMs: Math.round(durationMs * 1000) / 1000,
      auth: callerOf(call),
    };
    if (code === status.INTERNAL || code === status.UNKNOWN)
      outcome.logger.error({ ...line, err: error }, outcome.message);
    else if (code === status.UNAVAILABLE)
      outcome.logger.warn({ ...line, err: error }, outcome.message);
    else outcome.logger.info(line, outcome.message);
  }

  private outcomeOf(code: status): Outcome {
    let outcome = this.outcomes.get(code);
    if (!outcome) {
      const labels = {
        grpc_service: this.service,
        grpc_method: this.method,
        grpc_code: status[code],
      };
      outcome = {
        message: `gRPC ${this.fullName} ${status[code]}`,
        handled: this.metrics.grpcHandled.labels(labels),
        seconds: this.metrics.grpcHandlingSeconds.labels(labels),
        logger: this.logger.child({ grpc: { method: this.fullName, code: status[code] } }),
      };
      this.outcomes.set(code, outcome);
    }
    return outcome;
  }
}

/** Hands each gRPC controller the observer of its methods (logger and metrics injected). */
@Injectable()
export class GrpcObservability {
  private readonly logger: Logger;
  /** By full name, so the guard's refusals and the handler's calls share their metric children. */
  private readonly methods = new Map<string, ObservedGrpcMethod>();

  constructor(
    @Inject(ROOT_LOGGER) rootLogger: Logger,
    private readonly metrics: MetricsService,
  ) {
    // A binding, serialized once rather than per call.
    this.logger = rootLogger.child({ context: 'gRPC' });
  }

  /** The observer of `service`'s method `method` (service as the proto names it: `users.Users`). */
  method(service: string, method: string): ObservedGrpcMethod {
    const fullName = `${service}/${method}`;
    let observed = this.methods.get(fullName);
    if (!observed) {
      observed = new ObservedGrpcMethod(this.logger, this.metrics, service, method);
      this.methods.set(fullName, observed);
    }
    return observed;
  }
}
