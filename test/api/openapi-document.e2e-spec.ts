// The committed openapi.json is the HTTP API under review: this spec fails while the document
// the service serves differs from it, so a change to a route, a DTO or a rule shows up as a diff
// of openapi.json in the same change. `npm run openapi` rewrites the file from the built service.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { projectRoot } from '../../src/project-root.js';
import { createTestApp, type TestApp } from '../support/test-app.js';

describe('openapi.json (e2e)', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  it('is the document the service serves at /docs-json (npm run openapi updates it)', async () => {
    const committed: unknown = JSON.parse(
      readFileSync(path.join(projectRoot(), 'openapi.json'), 'utf8'),
    );
    const served = await t.http().get('/docs-json').expect(200);
    // toEqual names the first paths that differ; the hint says how to bring the file up to date.
    expect({
      served: served.body as unknown,
      hint: 'run npm run openapi and commit openapi.json',
    }).toEqual({
      served: committed,
      hint: 'run npm run openapi and commit openapi.json',
    });
  });

  it('publishes the contract patterns the service enforces', async () => {
    const { body } = await t.http().get('/docs-json').expect(200);
    const document = body as {
      paths: Record<string, Record<string, { parameters?: { name: string; schema: object }[] }>>;
      components: { schemas: Record<string, { additionalProperties?: boolean }> };
    };
    const parameter = (route: string, name: string) =>
      document.paths[route].get.parameters?.find((p) => p.name === name)?.schema;
    expect(parameter('/users/{id}', 'id')).toMatchObject({
      type: 'string',
      pattern: expect.any(String),
    });
    expect(parameter('/users', 'sort')).toMatchObject({
      pattern: expect.stringContaining('createdAt'),
    });
    for (const dto of ['CreateUserDto', 'UpdateUserDto', 'CreatePostDto']) {
      expect(document.components.schemas[dto].additionalProperties).toBe(false);
    }
    expect(document.paths['/logo.png'].get).toBeDefined();
  });
});
