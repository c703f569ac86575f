import { EventEmitter } from 'node:events';
import { Controller, UseGuards } from '@nestjs/common';
import { GrpcMethod, ServerGrpc } from '@nestjs/microservices';
import express from 'express';
import pg from 'pg';
import { Subject } from 'rxjs';
import type { DataSource } from 'typeorm';
import { expressRouterProblems, routerLayers } from './express-router.js';
import { embeddedServerExited } from './embedded-postgres.js';
import {
  activeQuery,
  inOneWrite,
  isQueryable,
  pgClientProblems,
  retire,
  setPipeline,
} from './pg-client.js';
import {
  ENHANCER_METADATA,
  grpcPatternsOf,
  hasProcessingHooks,
  nestGrpcProblems,
  rpcExecutionContext,
} from './nest-grpc.js';
import { internalsProblems } from './self-check.js';
import { driverPool, poolClientClass, typeormDriverProblems } from './typeorm-driver.js';

// What the service borrows from pg, TypeORM, Express, Nest and embedded-postgres, checked against the
// versions installed: an upgrade that changes any of it fails here (and at boot), by name.
describe('library internals (src/internals)', () => {
  it('finds every pg Client internal on the installed pg', () => {
    expect(pgClientProblems()).toEqual([]);
    const client = new pg.Client();
    expect(activeQuery(client)).toBeNull();
    expect(isQueryable(client)).toBe(true);
    retire(client);
    expect(isQueryable(client)).toBe(false);
    setPipeline(client, true);
    expect((client as unknown as { pipeline: boolean }).pipeline).toBe(true);
    expect(inOneWrite(client, () => 'queued')).toBe('queued');
  });

  it("finds the route layers of an Express 5 app's router", () => {
    const app = express();
    app.get('/users/:id', (_request, response) => {
      response.end();
    });
    const layers = routerLayers(app);
    expect(layers.some((layer) => layer.route?.path === '/users/:id')).toBe(true);
    const route = layers.find((layer) => layer.route);
    expect(route?.match('/users/7')).toBeTruthy();
    expect(route?.match('/posts/7')).toBeFalsy();
    expect(expressRouterProblems(app)).toEqual([]);
  });

  it("finds the Client class of a pg Pool's settings", async () => {
    class Marked extends pg.Client {}
    const pool = new pg.Pool({ Client: Marked });
    expect(poolClientClass(pool)).toBe(Marked);
    await pool.end();
  });

  it('finds the Nest metadata and gRPC server internals the direct gRPC methods use', () => {
    expect(nestGrpcProblems()).toEqual([]);
    const guard = { canActivate: () => true };
    @Controller()
    class Probe {
      @GrpcMethod('Users', 'GetUser')
      @UseGuards(guard)
      getUser(): void {}
    }
    expect(grpcPatternsOf(Probe.prototype.getUser)).toMatchObject([
      { service: 'Users', rpc: 'GetUser' },
    ]);
    expect(Reflect.getMetadata(ENHANCER_METADATA.guards, Probe.prototype.getUser)).toEqual([guard]);
    const context = rpcExecutionContext(['request', 'metadata'], Probe, Probe.prototype.getUser);
    expect(context.switchToRpc().getContext()).toBe('metadata');
    const server = new ServerGrpc({ package: 'probe', protoPath: [] });
    expect(hasProcessingHooks(server)).toBe(false);
    server.setOnProcessingEndHook(() => {});
    expect(hasProcessingHooks(server)).toBe(true);
  });

  it("holds a stream's values while its call needs a drain, and writes them after it (Nest's ServerGrpc)", async () => {
    const written: number[] = [];
    let room = 1;
    const call = Object.assign(new EventEmitter(), {
      cancelled: false,
      write: (value: number) => {
        written.push(value);
        return --room > 0;
      },
      end: () => {},
    });
    const values = new Subject<number>();
    const server = Object.create(ServerGrpc.prototype) as {
      writeObservableToGrpc(source: Subject<number>, call: EventEmitter): Promise<void>;
    };
    const done = server.writeObservableToGrpc(values, call);
    values.next(1);
    values.next(2);
    values.next(3);
    expect(written).toEqual([1]);
    room = 10;
    call.emit('drain');
    expect(written).toEqual([1, 2, 3]);
    values.complete();
    await done;
  });

  it('names what is missing when an internal is gone', () => {
    expect(expressRouterProblems({})).toEqual([
      'Express router: app.router.stack has no route layers with match() and methods',
    ]);
    const changedDriver = { isInitialized: true, driver: {} } as unknown as DataSource;
    expect(driverPool(changedDriver)).toBeUndefined();
    expect(typeormDriverProblems(changedDriver)).toEqual([
      'TypeORM postgres driver: driver.master is not the pg Pool it opened',
    ]);
    expect(internalsProblems(changedDriver, {})).toHaveLength(2);
  });

  it("reads whether an embedded-postgres server's child has exited", () => {
    expect(embeddedServerExited({ process: { exitCode: null, signalCode: null } })).toBe(false);
    expect(embeddedServerExited({ process: { exitCode: 0, signalCode: null } })).toBe(true);
    expect(embeddedServerExited({ process: { exitCode: null, signalCode: 'SIGINT' } })).toBe(true);
    expect(embeddedServerExited({})).toBe(false);
  });
});
