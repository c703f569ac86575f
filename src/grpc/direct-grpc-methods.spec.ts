import { jest } from '@jest/globals';
import {
  type CanActivate,
  Logger,
  Controller,
  type ExecutionContext,
  Injectable,
  UseGuards,
  UseInterceptors,
  type CallHandler,
  type NestInterceptor,
} from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { Test } from '@nestjs/testing';
import { RpcException } from '@nestjs/microservices';
import { Metadata, status } from '@grpc/grpc-js';
import type { Observable } from 'rxjs';
import { DirectGrpcMethod, DirectGrpcMethods } from './direct-grpc-methods.js';

/** Lets a call through when its metadata says so; records what it was shown. */
@Injectable()
class MetadataGuard implements CanActivate {
  readonly seen: { type: string; handler: string; owner: string; metadata: unknown }[] = [];

  canActivate(context: ExecutionContext): boolean | Promise<boolean> {
    const metadata = context.switchToRpc().getContext<Metadata>();
    this.seen.push({
      type: context.getType(),
      handler: context.getHandler().name,
      owner: context.getClass().name,
      metadata,
    });
    const verdict = metadata.get('allow')[0];
    if (verdict === 'refuse') {
      throw new RpcException({ code: status.UNAUTHENTICATED, message: 'no token' });
    }
    if (verdict === 'later') return Promise.resolve(true);
    return verdict === 'yes';
  }
}

@Controller()
class PingController {
  @DirectGrpcMethod('Pinger', 'Ping')
  @UseGuards(MetadataGuard)
  ping(request: { n: number }): Promise<{ n: number }> {
    if (request.n < 0) return Promise.reject(new Error('negative, with secret details'));
    return Promise.resolve({ n: request.n + 1 });
  }
}

class PassThrough implements NestInterceptor {
  intercept(_context: ExecutionContext, next: CallHandler): Observable<unknown> {
    return next.handle();
  }
}

@Controller()
class InterceptedController {
  @DirectGrpcMethod('Pinger', 'Ping')
  @UseInterceptors(PassThrough)
  ping(): Promise<object> {
    return Promise.resolve({});
  }
}

async function directMethods(controller: new () => object) {
  const module = await Test.createTestingModule({
    imports: [DiscoveryModule],
    controllers: [controller],
    providers: [MetadataGuard, DirectGrpcMethods],
  }).compile();
  return { direct: module.get(DirectGrpcMethods), guard: module.get(MetadataGuard) };
}

const metadataWith = (allow: string) => {
  const metadata = new Metadata();
  metadata.set('allow', allow);
  return metadata;
};

describe(DirectGrpcMethods.name, () => {
  it('finds a direct method by its service and rpc, and nothing else', async () => {
    const { direct } = await directMethods(PingController);
    expect(direct.find('Pinger', 'Ping')).toEqual(expect.any(Function));
    expect(direct.find('Pinger', 'Pong')).toBeUndefined();
    expect(direct.find('Users', 'Ping')).toBeUndefined();
  });

  it("runs the method's guards with the call's RPC context, then the method", async () => {
    const { direct, guard } = await directMethods(PingController);
    const metadata = metadataWith('yes');
    const call = { cancelled: false };
    await expect(direct.find('Pinger', 'Ping')!({ n: 1 }, metadata, call)).resolves.toEqual({
      n: 2,
    });
    expect(guard.seen).toEqual([
      { type: 'rpc', handler: 'ping', owner: 'PingController', metadata },
    ]);
    await expect(
      direct.find('Pinger', 'Ping')!({ n: 2 }, metadataWith('later'), call),
    ).resolves.toEqual({
      n: 3,
    });
  });

  it("refuses as Nest does when a guard says no, and keeps a guard's own refusal", async () => {
    const { direct } = await directMethods(PingController);
    const ping = direct.find('Pinger', 'Ping')!;
    const refused = await ping({ n: 1 }, metadataWith('no'), {}).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(RpcException);
    expect(direct.statusOf(refused)).toEqual({ code: status.INTERNAL, message: 'internal error' });
    const unauthenticated = await ping({ n: 1 }, metadataWith('refuse'), {}).catch(
      (e: unknown) => e,
    );
    expect(direct.statusOf(unauthenticated)).toEqual({
      code: status.UNAUTHENTICATED,
      message: 'no token',
    });
  });

  it("maps the method's failure as GrpcExceptionsFilter does: logged, no details sent", async () => {
    const logged = jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    const { direct } = await directMethods(PingController);
    const failure = await direct.find('Pinger', 'Ping')!({ n: -1 }, metadataWith('yes'), {}).catch(
      (error: unknown) => error,
    );
    expect(direct.statusOf(failure)).toEqual({ code: status.INTERNAL, message: 'internal error' });
    expect(logged).toHaveBeenCalledWith({ err: failure, msg: 'call failed' });
    logged.mockRestore();
  });

  it('refuses to serve a direct method whose interceptors it would skip', async () => {
    const { direct } = await directMethods(InterceptedController);
    expect(() => direct.find('Pinger', 'Ping')).toThrow(
      'InterceptedController.ping is a direct gRPC method: it cannot have interceptors',
    );
  });
});
