import express from 'express';
import pg from 'pg';
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
import { internalsProblems } from './self-check.js';
import { driverPool, typeormDriverProblems } from './typeorm-driver.js';

// What the service borrows from pg, TypeORM, Express and embedded-postgres, checked against the
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
