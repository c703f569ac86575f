// The test database that globalSetup prepared (test/support/global-setup.mjs): the embedded
// PostgreSQL, or TEST_DATABASE_URL. A module of its own, so that helpers which only need its URL
// do not load the application (test-app.ts).

export function testDatabaseUrl(): string {
  const url = process.env.TEST_DATABASE_URL;
  if (!url)
    throw new Error('TEST_DATABASE_URL is not set: run the tests through jest (globalSetup)');
  return url;
}
