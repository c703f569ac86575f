import type { ExecutionContext, Type } from '@nestjs/common';
import {
  EXCEPTION_FILTERS_METADATA,
  GUARDS_METADATA,
  INTERCEPTORS_METADATA,
  PIPES_METADATA,
} from '@nestjs/common/constants.js';
import { Reflector } from '@nestjs/core';
import { ExecutionContextHost } from '@nestjs/core/helpers/execution-context-host.js';
import { GrpcMethod, ServerGrpc } from '@nestjs/microservices';
import { PATTERN_METADATA } from '@nestjs/microservices/constants.js';

/**
 * The metadata keys under which `@UseGuards`, `@UseInterceptors`, `@UsePipes` and `@UseFilters`
 * store what a class or method declares (Nest's constants module, not its public API).
 */
export const ENHANCER_METADATA = {
  guards: GUARDS_METADATA,
  interceptors: INTERCEPTORS_METADATA,
  pipes: PIPES_METADATA,
  filters: EXCEPTION_FILTERS_METADATA,
} as const;

/** A gRPC method a handler is declared for. */
export interface GrpcPattern {
  service: string;
  rpc: string;
}

const reflector = new Reflector();

/** The gRPC methods `handler` is declared for with `@GrpcMethod` (its pattern metadata). */
export function grpcPatternsOf(handler: object): GrpcPattern[] {
  return reflector.get<GrpcPattern[] | undefined>(PATTERN_METADATA, handler as Type) ?? [];
}

/**
 * The execution context Nest's RPC pipeline gives guards for a call of `handler` on
 * `controller` with `args` (request, metadata, call): Nest's ExecutionContextHost.
 */
export function rpcExecutionContext(
  args: unknown[],
  controller: Type,
  handler: (...args: unknown[]) => unknown,
): ExecutionContext {
  const context = new ExecutionContextHost(args, controller, handler);
  context.setType('rpc');
  return context;
}

/**
 * Whether processing hooks are set on a microservice server (`setOnProcessingEndHook`, which
 * instrumentations set with their start hook; the start hook always has a default that does
 * nothing): only Nest's own per-call path runs them.
 */
export function hasProcessingHooks(server: ServerGrpc): boolean {
  return (server as unknown as { onProcessingEndHook?: unknown }).onProcessingEndHook !== undefined;
}

/** The ServerGrpc methods the service overrides or relies on (AppGrpcServer, the watch stream). */
const SERVER_GRPC_METHODS = [
  'createService',
  'createUnaryServiceMethod',
  // Writes a streaming method's Observable to the call, holding values while the call needs a
  // drain: the change feed's watch reads its next page once the call has drained.
  'writeObservableToGrpc',
  'setOnProcessingEndHook',
] as const;

/** What no longer holds of the Nest internals above (empty when it all does). */
export function nestGrpcProblems(): string[] {
  const problems: string[] = [];
  const expect = (holds: boolean, what: string) => holds || problems.push(`Nest: ${what}`);
  for (const [kind, key] of Object.entries(ENHANCER_METADATA)) {
    expect(typeof key === 'string' && key.length > 0, `the ${kind} metadata key is gone`);
  }

  class Probe {
    call(): void {}
  }
  GrpcMethod('ProbeService', 'Call')(
    Probe.prototype,
    'call',
    Object.getOwnPropertyDescriptor(Probe.prototype, 'call')!,
  );
  const [pattern] = grpcPatternsOf(Probe.prototype.call);
  expect(
    pattern?.service === 'ProbeService' && pattern.rpc === 'Call',
    '@GrpcMethod no longer stores { service, rpc } under PATTERN_METADATA',
  );

  const args = ['request', 'metadata', 'call'];
  const context = rpcExecutionContext(args, Probe, Probe.prototype.call);
  expect(
    context.getType() === 'rpc' &&
      context.getClass() === Probe &&
      context.getHandler() === Probe.prototype.call &&
      context.switchToRpc().getData() === 'request',
    'ExecutionContextHost no longer describes an RPC call',
  );

  const prototype = ServerGrpc.prototype as unknown as Record<string, unknown>;
  for (const method of SERVER_GRPC_METHODS) {
    expect(typeof prototype[method] === 'function', `ServerGrpc.${method}() is gone`);
  }
  const server = Object.create(ServerGrpc.prototype) as ServerGrpc;
  const before = hasProcessingHooks(server);
  server.setOnProcessingEndHook(() => {});
  expect(
    !before && hasProcessingHooks(server),
    'setOnProcessingEndHook() no longer sets onProcessingEndHook',
  );
  return problems;
}
