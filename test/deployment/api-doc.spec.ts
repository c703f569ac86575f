// docs/api.md is the reference client teams read, docs/examples.http their first requests: every
// operation of the OpenAPI document the service serves must be in both, and every rpc of proto/
// in docs/api.md. A route or rpc added without its documentation fails here.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { projectRoot } from '../../src/project-root.js';
import { createTestApp, type TestApp } from '../support/test-app.js';

const root = projectRoot();
const apiDoc = readFileSync(path.join(root, 'docs', 'api.md'), 'utf8');
const examples = readFileSync(path.join(root, 'docs', 'examples.http'), 'utf8');
const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'] as const;

/** `/users/{id}/posts/{postId}` as docs/api.md writes it: `/users/:id/posts/:postId`. */
function expressPath(openApiPath: string): string {
  return openApiPath.replace(/\{([^}]+)\}/g, ':$1');
}

/** True when the page names the operation in code: `GET /users/:id` (the path then ends). */
function documents(page: string, method: string, route: string): boolean {
  const escaped = `${method.toUpperCase()} ${route}`.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(`\`${escaped}\``).test(page);
}

/** True when docs/examples.http has a request line for the operation: `GET {{host}}/users/1?…`. */
function hasExample(file: string, method: string, route: string): boolean {
  const pattern = route
    .split(/:\w+/)
    .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
    .join('[^/?\\s]+');
  return new RegExp(`^${method} \\{\\{\\w+\\}\\}${pattern}(\\?\\S*)?$`, 'm').test(file);
}

/** Every `package.Service/Method` declared in the proto files under proto/. */
function protoRpcs(source: string): string[] {
  const withoutComments = source.replace(/\/\/.*$/gm, '').replace(/\/\*[\s\S]*?\*\//g, '');
  const pkg = /\bpackage\s+([\w.]+)\s*;/.exec(withoutComments)?.[1];
  const rpcs: string[] = [];
  for (const service of withoutComments.matchAll(/\bservice\s+(\w+)\s*\{([\s\S]*?)\n?\}/g)) {
    for (const rpc of service[2].matchAll(/\brpc\s+(\w+)\s*\(/g)) {
      rpcs.push(`${pkg ? `${pkg}.` : ''}${service[1]}/${rpc[1]}`);
    }
  }
  return rpcs;
}

describe('docs/api.md', () => {
  let testApp: TestApp;
  let operations: string[];

  beforeAll(async () => {
    testApp = await createTestApp();
    const response = await testApp.http().get('/docs-json').expect(200);
    const paths = (response.body as { paths: Record<string, Record<string, unknown>> }).paths;
    operations = Object.entries(paths).flatMap(([route, item]) =>
      METHODS.filter((method) => item[method] !== undefined).map(
        (method) => `${method.toUpperCase()} ${expressPath(route)}`,
      ),
    );
  });

  afterAll(async () => {
    await testApp?.close();
  });

  it('describes every operation of the served OpenAPI document', () => {
    expect(operations.length).toBeGreaterThan(5);
    const missing = operations.filter((operation) => {
      const [method, route] = operation.split(' ');
      return !documents(apiDoc, method, route);
    });
    expect(missing).toEqual([]);
  });

  it('docs/examples.http has a request for every operation', () => {
    const missing = operations.filter((operation) => {
      const [method, route] = operation.split(' ');
      return !hasExample(examples, method, route);
    });
    expect(missing).toEqual([]);
  });

  it('describes every rpc of proto/', () => {
    const files = readdirSync(path.join(root, 'proto')).filter((name) => name.endsWith('.proto'));
    const rpcs = files.flatMap((name) =>
      protoRpcs(readFileSync(path.join(root, 'proto', name), 'utf8')),
    );
    expect(rpcs).toContain('users.Users/GetUser');
    expect(rpcs.filter((rpc) => !apiDoc.includes(`\`${rpc}\``))).toEqual([]);
  });

  it('the check itself: an operation or rpc the page lacks is reported', () => {
    expect(documents(apiDoc, 'GET', '/users/:id')).toBe(true);
    expect(documents(apiDoc, 'DELETE', '/users/:id/posts/:postId')).toBe(false);
    expect(documents('`GET /users/:id/posts`', 'GET', '/users/:id')).toBe(false);
    expect(hasExample('GET {{host}}/users/1?x=1', 'GET', '/users/:id')).toBe(true);
    expect(hasExample('GET {{host}}/users/1/posts', 'GET', '/users/:id')).toBe(false);
    expect(
      protoRpcs(
        'package a.b;\n// rpc Old (X) returns (Y);\nservice S {\n  rpc Do (X) returns (Y);\n}',
      ),
    ).toEqual(['a.b.S/Do']);
  });
});
