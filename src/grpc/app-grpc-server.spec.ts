import { jest } from '@jest/globals';
import { Metadata, type sendUnaryData, type ServerUnaryCall, status } from '@grpc/grpc-js';
import { GrpcMethodStreamingType } from '@nestjs/microservices';
import { throwError } from 'rxjs';
import { AppGrpcServer } from './app-grpc-server.js';
import type { DirectGrpcMethods } from './direct-grpc-methods.js';

type Handler = (request: unknown, metadata: unknown, call: unknown) => Promise<unknown>;

/** The unary method the server hands grpc-js for `handler`, and one call of it. */
function callThrough(server: AppGrpcServer, handler: Handler, request: unknown) {
  const method = server.createUnaryServiceMethod(handler);
  const call = { request, metadata: new Metadata() } as ServerUnaryCall<unknown, unknown>;
  return new Promise<{ error: unknown; reply: unknown }>((resolve) => {
    const callback: sendUnaryData<unknown> = (error, reply) => resolve({ error, reply });
    void method(call, callback);
  });
}

const server = () => new AppGrpcServer({ package: 'users', protoPath: [] });

describe(AppGrpcServer.name, () => {
  it("answers with the value of Nest's handler, called with the request, metadata and call", async () => {
    const handler = jest.fn<Handler>((request) =>
      Promise.resolve({ id: (request as { id: number }).id }),
    );
    const { error, reply } = await callThrough(server(), handler, { id: 7 });
    expect(error).toBeNull();
    expect(reply).toEqual({ id: 7 });
    expect(handler).toHaveBeenCalledWith(
      { id: 7 },
      expect.any(Metadata),
      expect.objectContaining({ request: { id: 7 } }),
    );
  });

  it("answers with the error of an exception filter's Observable", async () => {
    const mapped = { code: status.NOT_FOUND, details: 'user 7 not found' };
    const { error, reply } = await callThrough(
      server(),
      () => Promise.resolve(throwError(() => mapped)),
      {
        id: 7,
      },
    );
    expect(error).toBe(mapped);
    expect(reply).toBeUndefined();
  });

  it('answers with a rejected handler’s error', async () => {
    const failure = new Error('boom');
    const { error } = await callThrough(server(), () => Promise.reject(failure), { id: 7 });
    expect(error).toBe(failure);
  });

  it("takes Nest's own path, running the processing hooks, when they are set", async () => {
    const grpc = server();
    const ended: unknown[] = [];
    grpc.setOnProcessingEndHook((_transport, context) => ended.push(context));
    const { error, reply } = await callThrough(grpc, () => Promise.resolve({ id: 7 }), { id: 7 });
    expect(error).toBeNull();
    expect(reply).toEqual({ id: 7 });
    expect(ended).toEqual([{ id: 7 }]);
  });

  it("answers a direct method from its own handler, and every other method through Nest's", async () => {
    const direct = {
      find: (service: string, rpc: string) =>
        service === 'Users' && rpc === 'GetUser'
          ? (request: unknown) => Promise.resolve({ direct: request })
          : undefined,
      statusOf: () => ({ code: status.INTERNAL, message: 'internal error' }),
    } as unknown as DirectGrpcMethods;
    const grpc = new AppGrpcServer({ package: 'users', protoPath: [] }, direct);
    for (const rpc of ['GetUser', 'ListUsers']) {
      grpc.addHandler(
        grpc.createPattern('Users', rpc, GrpcMethodStreamingType.NO_STREAMING),
        (request: unknown) => Promise.resolve({ nest: request }),
      );
    }
    const unary = { requestStream: false, responseStream: false };
    const service = (await grpc.createService(
      { prototype: { GetUser: unary, ListUsers: unary } },
      'Users',
    )) as Record<string, (call: unknown, callback: sendUnaryData<unknown>) => void>;
    const answer = (method: string) =>
      new Promise((resolve) =>
        service[method]({ request: 1, metadata: new Metadata() }, (_error, reply) =>
          resolve(reply),
        ),
      );
    await expect(answer('GetUser')).resolves.toEqual({ direct: 1 });
    await expect(answer('ListUsers')).resolves.toEqual({ nest: 1 });
  });
});
