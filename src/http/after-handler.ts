import { Req } from '@nestjs/common';
import { ROUTE_ARGS_METADATA } from '@nestjs/common/constants.js';
import type { Request, Response } from 'express';

/** Turns what a route handler returned into the body to send, writing headers on the way. */
export type AfterHandlerStep = (result: unknown, request: Request, response: Response) => unknown;

type Handler = (this: unknown, ...args: unknown[]) => unknown;

/**
 * Runs `step` on what the route handler returns, before Nest sends it: the work of an
 * interceptor's `map()`, as one plain call. A Nest interceptor runs through an RxJS pipeline per
 * request (defer, mergeAll, an async resource, a ReplaySubject, lastValueFrom), which cost more
 * CPU than what these steps do on the reads (bench/README.md, profile-driven changes). The step
 * runs where an interceptor bound to the route would: inside the route's interceptors (so
 * `@Idempotent()` stores the headers it writes), after guards and pipes, on success only.
 *
 * The handler is wrapped: its metadata (route, guards, OpenAPI) is carried over, and it gets
 * the request as one more argument after its own (`@Req()`), which it ignores. Called without
 * a request (straight from a unit test or another provider), it is the handler alone.
 */
export function AfterHandler(step: AfterHandlerStep): MethodDecorator {
  return (target, key, descriptor) => {
    const handler = descriptor.value as unknown as Handler;
    // Parameter decorators run before method decorators: the handler's own arguments are known.
    const declared = (Reflect.getMetadata(ROUTE_ARGS_METADATA, target.constructor, key) ??
      {}) as Record<string, { index: number }>;
    const index = Math.max(-1, ...Object.values(declared).map((argument) => argument.index)) + 1;
    Req()(target, key, index);
    const wrapped = async function (this: unknown, ...args: unknown[]): Promise<unknown> {
      const request = args[index] as Request | undefined;
      const result = await handler.apply(this, args);
      return request?.res ? step(result, request, request.res) : result;
    };
    // OpenAPI finds the handler's parameter types by its name.
    Object.defineProperty(wrapped, 'name', { value: handler.name });
    for (const name of Reflect.getOwnMetadataKeys(handler) as unknown[]) {
      Reflect.defineMetadata(name, Reflect.getOwnMetadata(name, handler), wrapped);
    }
    descriptor.value = wrapped as unknown as typeof descriptor.value;
    return descriptor;
  };
}
