import { ServerGrpc } from '@nestjs/microservices';
import type { sendUnaryData, ServerUnaryCall } from '@grpc/grpc-js';
import { isObservable, lastValueFrom } from 'rxjs';

/** What Nest hands a transport for each method: guards, pipes and filters around the handler. */
type MethodHandler = (request: unknown, metadata: unknown, call: unknown) => Promise<unknown>;
/** A unary method as grpc-js calls it. */
type UnaryMethod = (
  call: ServerUnaryCall<unknown, unknown>,
  callback: sendUnaryData<unknown>,
) => Promise<void>;

/**
 * Nest's gRPC transport, answering unary calls without RxJS. Nest's own unary path copies every
 * call (`{ ...call }`) for the processing hooks, then turns the handler's promise into an
 * Observable (fromPromise, mergeMap, finalize) and subscribes to it: per call, that cost more CPU
 * than the rest of the framework's dispatch (bench/README.md). Here the handler Nest built (its
 * guards, pipes and exception filters) is awaited and its value sent. An exception filter's answer
 * is an Observable that errors: it is read as such. Streaming methods, and unary calls when
 * processing hooks are set (none is, in this app), take Nest's own path unchanged.
 */
export class AppGrpcServer extends ServerGrpc {
  override createUnaryServiceMethod(methodHandler: MethodHandler): UnaryMethod {
    const nestPath = super.createUnaryServiceMethod(methodHandler) as UnaryMethod;
    return (call, callback) => {
      if (this.onProcessingEndHook !== undefined) return nestPath(call, callback);
      return methodHandler(call.request, call.metadata, call)
        .then((value) => (isObservable(value) ? lastValueFrom(value) : value))
        .then(
          (reply) => callback(null, reply),
          (error: unknown) => callback(error as Error),
        );
    };
  }
}
