import {
  applyDecorators,
  type CanActivate,
  Injectable,
  SetMetadata,
  type Type,
  UseFilters,
} from '@nestjs/common';
import { DiscoveryService, MetadataScanner, ModuleRef, Reflector } from '@nestjs/core';
import { GrpcMethod, RpcException } from '@nestjs/microservices';
import { isObservable, lastValueFrom } from 'rxjs';
import { ENHANCER_METADATA, grpcPatternsOf, rpcExecutionContext } from '../internals/nest-grpc.js';
import { GrpcExceptionsFilter } from './grpc-exceptions.filter.js';

const DIRECT = Symbol('direct gRPC method');

/** A controller's method, as Nest's metadata is attached to it. */
type Method = (...args: unknown[]) => Promise<unknown>;

/** A unary handler called straight from grpc-js: the guards, then the method; or an error. */
export type DirectUnaryHandler = (
  request: unknown,
  metadata: unknown,
  call: unknown,
) => Promise<unknown>;

/**
 * `@GrpcMethod(service, rpc)` for a hot unary method, answered by AppGrpcServer without Nest's
 * per-call dispatch (its execution context, guards consumer, pipes over every argument,
 * interceptors consumer and RxJS, about 10 µs of a 80 µs call: bench/README.md). What the method
 * declares still runs, and the same way: its guards with an execution context of the call, in
 * order, then the method, and every error through GrpcExceptionsFilter. A direct method may
 * declare no interceptor, pipe or other exception filter: the app refuses to start if it does
 * (DirectGrpcMethods), rather than skip them.
 */
export function DirectGrpcMethod(service: string, rpc: string): MethodDecorator {
  return applyDecorators(
    GrpcMethod(service, rpc),
    UseFilters(GrpcExceptionsFilter),
    SetMetadata(DIRECT, true),
  );
}

/** The direct gRPC methods of the app's controllers, found once at startup. */
@Injectable()
export class DirectGrpcMethods {
  private handlers?: Map<string, DirectUnaryHandler>;
  private readonly filter = new GrpcExceptionsFilter();

  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly reflector: Reflector,
    private readonly moduleRef: ModuleRef,
  ) {}

  /** The direct handler of `service`'s method `rpc` (service as the controller names it). */
  find(service: string, rpc: string): DirectUnaryHandler | undefined {
    this.handlers ??= this.discover();
    return this.handlers.get(`${service}/${rpc}`);
  }

  /** What a call that threw ends with: GrpcExceptionsFilter's status, as Nest's path sends it. */
  statusOf(error: unknown): { code: number; message: string } {
    return this.filter.statusOf(error);
  }

  private discover(): Map<string, DirectUnaryHandler> {
    const handlers = new Map<string, DirectUnaryHandler>();
    for (const wrapper of this.discovery.getControllers()) {
      const instance = wrapper.instance as Record<string, unknown> | undefined;
      const controller = wrapper.metatype as Type | undefined;
      if (!instance || !controller) continue;
      const prototype = Object.getPrototypeOf(instance) as object;
      for (const name of this.scanner.getAllMethodNames(prototype)) {
        const method = instance[name] as Method;
        if (!this.reflector.get<boolean | undefined>(DIRECT, method)) continue;
        this.refuseSkippedEnhancers(controller, method, name);
        const guards = this.guardsOf(controller, method);
        const handler = this.handlerOf(instance, controller, method, guards);
        for (const { service, rpc } of grpcPatternsOf(method)) {
          handlers.set(`${service}/${rpc}`, handler);
        }
      }
    }
    return handlers;
  }

  private handlerOf(
    instance: object,
    controller: Type,
    method: Method,
    guards: CanActivate[],
  ): DirectUnaryHandler {
    if (guards.length === 0) {
      return (request, metadata, call) => method.call(instance, request, metadata, call);
    }
    return async (request, metadata, call) => {
      const args = [request, metadata, call];
      const context = rpcExecutionContext(args, controller, method);
      for (const guard of guards) {
        const verdict = guard.canActivate(context);
        const allowed =
          typeof verdict === 'boolean'
            ? verdict
            : await (isObservable(verdict) ? lastValueFrom(verdict) : verdict);
        // What Nest's RPC context throws when a guard answers false.
        if (!allowed) throw new RpcException('Forbidden resource');
      }
      return method.apply(instance, args);
    };
  }

  /** The enhancers of one kind the controller, then the method, declare (Nest's order). */
  private declared(key: string, controller: Type, method: Method): unknown[] {
    const list = (target: Type | Method) =>
      this.reflector.get<unknown[] | undefined>(key, target) ?? [];
    return [...list(controller), ...list(method)];
  }

  /** The guards, resolved once. */
  private guardsOf(controller: Type, method: Method): CanActivate[] {
    return this.declared(ENHANCER_METADATA.guards, controller, method).map((guard) =>
      typeof guard === 'function'
        ? this.moduleRef.get(guard as Type<CanActivate>, { strict: false })
        : (guard as CanActivate),
    );
  }

  private refuseSkippedEnhancers(controller: Type, method: Method, name: string): void {
    const declared = (key: string) => this.declared(key, controller, method);
    const filters = declared(ENHANCER_METADATA.filters);
    const skipped = [
      ...declared(ENHANCER_METADATA.interceptors),
      ...declared(ENHANCER_METADATA.pipes),
      ...filters.filter((filter) => filter !== GrpcExceptionsFilter),
    ];
    if (skipped.length > 0) {
      throw new Error(
        `${controller.name}.${name} is a direct gRPC method: it cannot have interceptors, pipes or exception filters other than GrpcExceptionsFilter`,
      );
    }
  }
}
