import { GUARDS_METADATA, METHOD_METADATA } from '@nestjs/common/constants.js';
import { RequestMethod } from '@nestjs/common';
import { ChangesController } from '../changes/changes.controller.js';
import { ChangesGrpcController } from '../changes/changes.grpc.controller.js';
import { PostsController } from '../posts/posts.controller.js';
import { UsersController } from '../users/users.controller.js';
import { UsersGrpcController } from '../users/users.grpc.controller.js';
import { GrpcAuthGuard } from './grpc-auth.guard.js';
import { HttpAuthGuard } from './http-auth.guard.js';
import { AUTH_REQUIREMENT, type AuthRequirement } from './scopes.js';

/** Every handler of a controller: its prototype's methods, the constructor aside. */
function handlers(controller: { prototype: object }): [string, (...args: never[]) => unknown][] {
  const prototype = controller.prototype as Record<string, unknown>;
  return Object.getOwnPropertyNames(prototype)
    .filter((name) => name !== 'constructor' && typeof prototype[name] === 'function')
    .map((name) => [name, prototype[name] as (...args: never[]) => unknown]);
}

const READS = new Set([RequestMethod.GET, RequestMethod.HEAD]);

describe('authentication coverage of the users and posts handlers', () => {
  it.each([
    [UsersController.name, UsersController],
    [PostsController.name, PostsController],
    [UsersGrpcController.name, UsersGrpcController],
    [ChangesController.name, ChangesController],
    [ChangesGrpcController.name, ChangesGrpcController],
  ])('%s: every handler declares its scope and binds both guards', (_, controller) => {
    const found = handlers(controller);
    expect(found.length).toBeGreaterThan(0);
    for (const [name, handler] of found) {
      const requirement = Reflect.getMetadata(AUTH_REQUIREMENT, handler) as AuthRequirement;
      expect([name, requirement?.kind]).toEqual([name, 'scope']);
      const guards = Reflect.getMetadata(GUARDS_METADATA, handler) as unknown[];
      expect([name, guards]).toEqual([
        name,
        expect.arrayContaining([HttpAuthGuard, GrpcAuthGuard]),
      ]);
    }
  });

  it('asks users:read of reads (GET, gRPC GetUser and the change feed) and users:write of every other method', () => {
    for (const controller of [UsersController, PostsController, ChangesController]) {
      for (const [name, handler] of handlers(controller)) {
        const method = Reflect.getMetadata(METHOD_METADATA, handler) as RequestMethod;
        const { scope } = Reflect.getMetadata(AUTH_REQUIREMENT, handler) as { scope: string };
        expect([controller.name, name, scope]).toEqual([
          controller.name,
          name,
          READS.has(method) ? 'users:read' : 'users:write',
        ]);
      }
    }
    const getUser = Reflect.getMetadata(AUTH_REQUIREMENT, UsersGrpcController.prototype.getUser);
    expect(getUser).toEqual({ kind: 'scope', scope: 'users:read' });
    for (const [name, handler] of handlers(ChangesGrpcController)) {
      expect([name, Reflect.getMetadata(AUTH_REQUIREMENT, handler)]).toEqual([
        name,
        { kind: 'scope', scope: 'users:read' },
      ]);
    }
  });
});
