import { Metadata, type ServerUnaryCall, status } from '@grpc/grpc-js';
import type { AdmissionController, AdmissionRequest } from './admission.js';
import { LateRejections } from './late-rejections.js';
import type { OverloadMetrics } from './overload.metrics.js';
import { grpcWorkClass, type RejectReason, type WorkClass } from './work-class.js';

/** A call as grpc-js hands it to a method: unary, or server-streaming. */
type Call = ServerUnaryCall<unknown, unknown> & {
  on(event: string, listener: () => void): unknown;
};
type Callback = (error: unknown, reply?: unknown) => void;
type Method = (call: Call, callback?: Callback) => unknown;

/** The status a rejected call ends with. */
interface Refusal {
  code: status;
  details: string;
  metadata: Metadata;
}

/**
 * Wraps the methods of one gRPC service so that each call passes admission before its handler
 * (guards, deserialised request aside, nothing has run): a rejected call ends UNAVAILABLE with
 * `grpc-retry-pushback-ms`, which grpc clients with a retry policy honour (late to a peer that
 * asks again at once: LateRejections). A call whose deadline
 * has passed, or that its client cancelled while it waited, is never started. Health and
 * reflection are registered on the server apart from these and never pass admission.
 */
export function admitGrpcCalls(
  service: Record<string, unknown>,
  streaming: (method: string) => boolean,
  admission: AdmissionController,
  metrics: OverloadMetrics,
  retryAfterS: number,
  maxHeld: number,
  /** Counts a turned-away call in the gRPC server metrics, as the caller saw it. */
  turnedAway: (method: string, reason: RejectReason, call: Call, started: bigint) => void,
): void {
  const metadata = new Metadata();
  metadata.set('grpc-retry-pushback-ms', String(retryAfterS * 1000));
  const overloaded: Refusal = {
    code: status.UNAVAILABLE,
    details: `the service is over its capacity: retry after ${retryAfterS} s`,
    metadata,
  };
  const expired: Refusal = {
    code: status.DEADLINE_EXCEEDED,
    details: 'deadline exceeded before the call started',
    metadata: new Metadata(),
  };
  const late = new LateRejections(retryAfterS * 1000, maxHeld);
  for (const [name, value] of Object.entries(service)) {
    const method = value as Method;
    const workClass = grpcWorkClass(name);
    const stream = streaming(name);
    service[name] = (call: Call, callback?: Callback) => {
      const started = process.hrtime.bigint();
      const refuse = (reason: RejectReason) => {
        metrics.rejected('grpc', workClass, reason);
        turnedAway(name, reason, call, started);
        if (reason === 'client_gone') return;
        const refusal = reason === 'deadline' ? expired : overloaded;
        late.answer(call.getPeer(), () => {
          if (stream) call.emit('error', refusal);
          else callback!(refusal);
        });
      };
      admission.offer(new GrpcAdmission(call, callback, workClass, method, refuse));
    };
  }
}

/** One gRPC call at admission. */
class GrpcAdmission implements AdmissionRequest {
  readonly deadline: number;
  private cancelled = false;
  private done?: () => void;

  constructor(
    private readonly call: Call,
    /** Unary calls answer through it; a streaming call has none. */
    private readonly callback: Callback | undefined,
    readonly workClass: WorkClass,
    private readonly method: Method,
    readonly reject: (reason: RejectReason) => void,
  ) {
    const deadline = call.getDeadline();
    const at = deadline instanceof Date ? deadline.getTime() : deadline;
    this.deadline = Number.isFinite(at) ? performance.now() + (at - Date.now()) : Infinity;
    call.on('cancelled', () => {
      this.cancelled = true;
      this.end();
    });
  }

  gone(): boolean {
    return this.cancelled || this.call.cancelled;
  }

  admit(done: () => void): void {
    this.done = done;
    if (this.gone()) {
      this.end();
      return this.reject('client_gone');
    }
    const callback = this.callback;
    if (callback) {
      this.method(this.call, (error, reply) => {
        this.end();
        callback(error, reply);
      });
      return;
    }
    this.call.on('finish', () => this.end());
    this.call.on('error', () => this.end());
    this.method(this.call);
  }

  private end(): void {
    const done = this.done;
    this.done = undefined;
    done?.();
  }
}
