// Fast, deterministic seeding for the benchmark, with the set-based inserts of
// scripts/lib/demo-data.mjs: 100,000 users and 500,000 posts take seconds.
//
//   node bench/seed.mjs [users] [posts]      (DATABASE_URL must point at a database named *bench*)
//
// The tables must already exist (the service creates them: MIGRATE_ON_BOOT=true).
import pg from 'pg';
import { seedPosts, seedUsers, truncate, vacuumAnalyze } from '../scripts/lib/demo-data.mjs';

export {
  ROLE_SHARES,
  ROLES,
  seedPosts,
  seedUsers,
  truncate,
  vacuumAnalyze,
} from '../scripts/lib/demo-data.mjs';

/** The role of the users the benchmark creates (POST /users): not one the list endpoint reads. */
export const BENCH_POST_ROLE = 'bench';

/**
 * Share of each table's pages marked all-visible, as the planner sees it (pg_class): below ~0.9
 * the COUNTs behind X-Total-Count stop using index-only scans and the figures mean little.
 */
export async function visibleShare(client, tables = ['users', 'posts']) {
  const { rows } = await client.query(
    `SELECT relname, CASE WHEN relpages = 0 THEN 1 ELSE relallvisible::float / relpages END AS share
     FROM pg_class WHERE relname = ANY($1)`,
    [tables],
  );
  return Object.fromEntries(rows.map((r) => [r.relname, r.share]));
}

/**
 * The whole seed: empty tables, `users` users, `posts` posts, then VACUUM ANALYZE.
 * @returns seconds taken per step
 */
export async function seed(client, { users, posts }) {
  const timings = {};
  const step = async (name, work) => {
    const start = performance.now();
    await work();
    timings[name] = (performance.now() - start) / 1000;
  };
  await step('truncate', () => truncate(client));
  await step('users', () => seedUsers(client, { to: users }));
  await step('posts', () => seedPosts(client, { count: posts, users }));
  await step('vacuumAnalyze', () => vacuumAnalyze(client));
  return timings;
}

/** Refuses a database whose name does not say it is for benchmarks: the seed truncates tables. */
export function assertBenchDatabase(url) {
  const name = decodeURIComponent(new URL(url).pathname.slice(1));
  if (!/bench/i.test(name)) {
    throw new Error(
      `refusing to seed database "${name}": the benchmark truncates users and posts, so its name must contain "bench"`,
    );
  }
}

if (process.argv[1] === import.meta.filename) {
  const url = process.env.BENCH_DATABASE_URL ?? process.env.DATABASE_URL;
  if (!url) {
    console.error('set BENCH_DATABASE_URL (or DATABASE_URL) to a database named *bench*');
    process.exit(2);
  }
  assertBenchDatabase(url);
  const users = Number(process.argv[2] ?? 100_000);
  const posts = Number(process.argv[3] ?? users * 5);
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const timings = await seed(client, { users, posts });
    console.log(`seeded ${users} users and ${posts} posts`, timings);
  } finally {
    await client.end();
  }
}
