import { createTestApp, type TestApp } from '../support/test-app.js';

describe('the schema (e2e)', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  it('is exactly what the entities describe once the migrations have run (no drift)', async () => {
    // What `npm run migration:generate` would write: nothing.
    const pending = await t.dataSource.driver.createSchemaBuilder().log();
    expect(pending.upQueries.map((query) => query.query)).toEqual([]);
  });
});
