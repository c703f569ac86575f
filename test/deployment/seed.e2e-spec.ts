// `npm run seed`: demo users and posts added to the development database, sizes from flags,
// appended to what is there (no email collides) or after --reset, and refused with
// NODE_ENV=production. Runs scripts/seed.mjs as a process against a migrated database of its own.
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { DataSource } from 'typeorm';
import { dataSourceOptions } from '../../src/database/database-options.js';
import { runMigrations } from '../../src/database/migrations.js';
import { projectRoot } from '../../src/project-root.js';
import { buildService } from '../support/service-process.js';
import { scratchDatabase } from '../support/test-app.js';

const ROOT = projectRoot();
const SEED = path.join(ROOT, 'scripts', 'seed.mjs');
const run = promisify(execFile);

describe('npm run seed (e2e)', () => {
  let scratch: Awaited<ReturnType<typeof scratchDatabase>>;
  let db: pg.Client;

  /** scripts/seed.mjs with these flags; resolves with its exit code and output. */
  async function seed(
    args: string[],
    env: Record<string, string> = {},
  ): Promise<{ code: number | null; output: string }> {
    const options = {
      cwd: ROOT,
      timeout: 60_000,
      env: {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        DATABASE_URL: scratch.url,
        NODE_ENV: 'development',
        ...env,
      },
    };
    try {
      const { stdout, stderr } = await run(process.execPath, [SEED, ...args], options);
      return { code: 0, output: stdout + stderr };
    } catch (error) {
      const failed = error as { code?: number; stdout?: string; stderr?: string };
      return { code: failed.code ?? null, output: `${failed.stdout}${failed.stderr}` };
    }
  }

  async function counts(): Promise<{ users: number; posts: number; orphans: number }> {
    const { rows } = await db.query(
      `SELECT (SELECT count(*) FROM users)::int AS users, (SELECT count(*) FROM posts)::int AS posts,
              (SELECT count(*) FROM posts p WHERE NOT EXISTS
                 (SELECT 1 FROM users u WHERE u.id = p.user_id))::int AS orphans`,
    );
    return rows[0] as { users: number; posts: number; orphans: number };
  }

  beforeAll(async () => {
    buildService();
    scratch = await scratchDatabase('users_seed_test');
    const dataSource = new DataSource(dataSourceOptions({ url: scratch.url } as never));
    await dataSource.initialize();
    await runMigrations(dataSource);
    await dataSource.destroy();
    db = new pg.Client({ connectionString: scratch.url });
    await db.connect();
  });

  afterAll(async () => {
    await db?.end();
    await scratch?.drop();
  });

  it('adds the users and posts the flags ask for, and more on a second run', async () => {
    const first = await seed(['--users', '30', '--posts', '90']);
    expect(first).toMatchObject({ code: 0 });
    expect(first.output).toContain('seeded 30 users and 90 posts into postgres://postgres');
    // The URL it names never shows a password (the embedded database has one; a trust-auth
    // server, such as CI's local PostgreSQL, has none to hide).
    const { password } = new URL(scratch.url);
    if (password) {
      expect(first.output).toContain('seeded 30 users and 90 posts into postgres://postgres:***@');
      expect(first.output).not.toContain(`:${password}@`);
    }
    expect(await counts()).toEqual({ users: 30, posts: 90, orphans: 0 });

    // Appended: new ids and new emails, no unique-index violation.
    expect(await seed(['--users', '10', '--posts', '5'])).toMatchObject({ code: 0 });
    expect(await counts()).toEqual({ users: 40, posts: 95, orphans: 0 });
    const { rows } = await db.query(
      'SELECT count(DISTINCT lower(email))::int AS distinct, count(email)::int AS total FROM users',
    );
    expect(rows[0].distinct).toBe(rows[0].total);
  });

  it('--reset empties the tables first, so ids start at 1 again', async () => {
    expect(await seed(['--reset', '--users', '5', '--posts', '0'])).toMatchObject({ code: 0 });
    expect(await counts()).toEqual({ users: 5, posts: 0, orphans: 0 });
    const { rows } = await db.query('SELECT min(id)::int AS first FROM users');
    expect(rows[0].first).toBe(1);
  });

  it('refuses NODE_ENV=production and bad sizes, writing nothing', async () => {
    const before = await counts();
    const production = await seed(['--users', '5'], { NODE_ENV: 'production' });
    expect(production.code).toBe(2);
    expect(production.output).toContain('refusing to seed with NODE_ENV=production');
    const bad = await seed(['--users', '-3']);
    expect(bad.code).not.toBe(0);
    expect(await counts()).toEqual(before);
  });
});
