// Demo users and posts, inserted set-based (INSERT ... SELECT generate_series), so 100,000 users
// and 500,000 posts take seconds rather than one round trip per row. Shared by the development
// seed (`npm run seed`, scripts/seed.mjs) and the benchmark's (bench/seed.mjs), each of which
// decides which database it may write to. The tables must exist (the service's migrations).

/** @import { ClientBase } from 'pg' */

/**
 * Roles and the share of users holding each one, so a role filter selects a realistic fraction:
 * `member` is the common case, `admin` the rare one.
 * @type {[role: string, share: number][]}
 */
export const ROLE_SHARES = [
  ['member', 0.6],
  ['viewer', 0.2],
  ['editor', 0.12],
  ['moderator', 0.06],
  ['admin', 0.02],
];
export const ROLES = ROLE_SHARES.map(([role]) => role);

/** Users are created one every 90 seconds from this instant (plus jitter): 1M users ≈ 2.9 years. */
const EPOCH = '2023-01-01T00:00:00Z';
const FIRST_NAMES = [
  'Ada', 'Alan', 'Grace', 'Linus', 'Barbara', 'Dennis', 'Margaret', 'Ken', 'Radia', 'Edsger',
  'Frances', 'Donald', 'Hedy', 'John', 'Katherine', 'Niklaus', 'Sophie', 'Tim', 'Shafi', 'Guido',
]; // prettier-ignore
const LAST_NAMES = [
  'Lovelace', 'Turing', 'Hopper', 'Torvalds', 'Liskov', 'Ritchie', 'Hamilton', 'Thompson',
  'Perlman', 'Dijkstra', 'Allen', 'Knuth', 'Lamarr', 'Backus', 'Johnson', 'Wirth', 'Wilson',
  'Berners-Lee', 'Goldwasser', 'van Rossum',
]; // prettier-ignore
const LOREM =
  'Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt ut ' +
  'labore et dolore magna aliqua. Ut enim ad minim veniam, quis nostrud exercitation ullamco ' +
  'laboris nisi ut aliquip ex ea commodo consequat. Duis aute irure dolor in reprehenderit in ' +
  'voluptate velit esse cillum dolore eu fugiat nulla pariatur. Excepteur sint occaecat cupidatat ' +
  'non proident, sunt in culpa qui officia deserunt mollit anim id est laborum.';

/**
 * SQL CASE choosing a role from a uniform random value `r` according to ROLE_SHARES.
 * @param {string} r
 * @returns {string}
 */
function roleCase(r) {
  let cumulative = 0;
  const branches = ROLE_SHARES.slice(0, -1).map(([role, share]) => {
    cumulative += share;
    return `WHEN ${r} < ${cumulative.toFixed(4)} THEN '${role}'`;
  });
  return `CASE ${branches.join(' ')} ELSE '${/** @type {[string, number]} */ (ROLE_SHARES.at(-1))[0]}' END`;
}

/** @param {string[]} values */
const sqlArray = (values) => `ARRAY[${values.map((v) => `'${v.replace(/'/g, "''")}'`).join(',')}]`;

/**
 * Runs `work` in a transaction that commits synchronously: VACUUM can mark pages all-visible
 * (which index-only scans, such as the list's COUNT, depend on) only once the inserting
 * transaction's commit is flushed, so an asynchronous commit (synchronous_commit=off) followed by
 * an immediate VACUUM would leave the visibility map empty and the planner on sequential scans.
 * @param {ClientBase} client
 * @param {() => Promise<unknown>} work
 * @returns {Promise<void>}
 */
async function inTransaction(client, work) {
  await client.query('BEGIN');
  await client.query('SET LOCAL synchronous_commit = on');
  try {
    await work();
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {});
    throw error;
  }
}

/**
 * Appends users `from + 1` to `to` (1-based sequence numbers; on a freshly truncated table they
 * become the ids). Every column derives from the sequence number and a seeded random(), so the
 * same call gives the same data. One in ten users has no email.
 * @param {ClientBase} client
 * @param {{ from?: number; to: number; skipTriggers?: boolean }} options
 * @returns {Promise<void>}
 */
export async function seedUsers(client, { from = 0, to, skipTriggers = false }) {
  if (to <= from) return;
  await client.query(`SELECT setseed(${((from % 1000) / 1000).toFixed(3)})`);
  await inTransaction(client, async () => {
    // As rows that were there before the upgrade that added the count triggers (superuser only).
    if (skipTriggers) await client.query('SET LOCAL session_replication_role = replica');
    await client.query(
      `INSERT INTO users (name, email, role, created_at, updated_at)
       SELECT (${sqlArray(FIRST_NAMES)})[1 + g % ${FIRST_NAMES.length}] || ' ' ||
                (${sqlArray(LAST_NAMES)})[1 + (g / ${FIRST_NAMES.length}) % ${LAST_NAMES.length}],
              CASE WHEN g % 10 = 0 THEN NULL ELSE 'user' || g || '@example.com' END,
              ${roleCase('r')},
              created_at,
              created_at + (r2 * interval '30 days')
       FROM (SELECT g, random() AS r, random() AS r2,
                    timestamptz '${EPOCH}' + g * interval '90 seconds'
                      + random() * interval '60 seconds' AS created_at
             FROM generate_series($1::int, $2::int) AS g) AS s
       ORDER BY g`,
      [from + 1, to],
    );
  });
}

/**
 * Adds `count` posts spread at random over users `firstUser`..`firstUser + users - 1` (about
 * count/users each; some none).
 * @param {ClientBase} client
 * @param {{ count: number; users: number; firstUser?: number }} options
 * @returns {Promise<void>}
 */
export async function seedPosts(client, { count, users, firstUser = 1 }) {
  if (count <= 0) return;
  await client.query('SELECT setseed(0.5)');
  // Through every trigger, as a real bulk load: the foreign key, and the list counts.
  await inTransaction(client, () =>
    client.query(
      `INSERT INTO posts (user_id, title, body, created_at, updated_at)
       SELECT $4::int + floor(random() * $2)::int,
              'Post ' || g || ': notes on ' || (${sqlArray(LAST_NAMES)})[1 + g % ${LAST_NAMES.length}],
              left($3, 40 + (g * 37) % 400),
              created_at,
              created_at
       FROM (SELECT g, timestamptz '${EPOCH}' + random() * interval '3 years' AS created_at
             FROM generate_series(1, $1::int) AS g) AS s`,
      [count, users, LOREM, firstUser],
    ),
  );
}

/**
 * Empties both tables and restarts their ids at 1, and the change feed with them: its events
 * name users by id, so ids used again would collide with the old events (docs/events.md).
 * @param {ClientBase} client
 * @returns {Promise<void>}
 */
export async function truncate(client) {
  await client.query(
    'TRUNCATE posts, users, user_changes, user_changes_watermark RESTART IDENTITY CASCADE',
  );
}

/**
 * Refreshes planner statistics and the visibility map (index-only scans for the counts).
 * @param {ClientBase} client
 * @param {string[]} [tables]
 * @returns {Promise<void>}
 */
export async function vacuumAnalyze(client, tables = ['users', 'posts']) {
  for (const table of tables) await client.query(`VACUUM (ANALYZE) ${table}`);
}
