// The runbooks' psql commands, run as written (bash and the real psql) against a throwaway
// PostgreSQL set up with deploy/sql/roles.sql, logged in as the operator role: the `kubectl` they
// call answers the operator's Secret only, so a command reading another Secret fails. The
// operator sees other roles' sessions, changes nothing and has every statement logged; the
// held-back runbook lists the transaction holding the feed first; the gRPC runbook's grep finds
// the service's log lines.
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { pino } from 'pino';
import { startThrowawayPostgres } from '../../scripts/lib/embedded-pg.mjs';
import { read, root } from '../support/project-files.js';
import { describeWhenInstalled } from '../support/when-installed.js';

const DATABASE = 'users_runbooks_test';
const OPERATOR = { role: 'users_service_operator', password: 'operator-secret-1' };
const OTHERS = [
  { role: 'users_service_app', password: 'app-secret-1' },
  { role: 'users_service_migrate', password: 'migrate-secret-1' },
];
const PSQL = spawnSync('psql', ['--version']).status === 0;

/** Every `psql` line of a `sh` block of the runbooks, with the runbook it comes from. */
const commands = readdirSync(path.join(root, 'docs/runbooks'))
  .filter((file) => file.endsWith('.md'))
  .sort()
  .flatMap((file) =>
    [...read(`docs/runbooks/${file}`).matchAll(/```sh\n([\s\S]*?)```/g)]
      .flatMap(([, block]) => block.split('\n'))
      .filter((line) => line.startsWith('psql '))
      .map((command) => ({ file, command })),
  );

describeWhenInstalled(
  'runbook commands as the operator role (e2e)',
  PSQL ? [] : ['psql'],
  'apt-get install postgresql-client',
  () => {
    let cluster: Awaited<ReturnType<typeof startThrowawayPostgres>>;
    const urlOf = ({ role, password }: typeof OPERATOR) =>
      `postgres://${role}:${password}@127.0.0.1:${cluster.port}/${DATABASE}`;

    /** A runbook line through bash, `kubectl` serving the operator's Secret and nothing else. */
    function run(command: string) {
      const kubectl = `kubectl() {
        if [ "$*" = "-n users get secret users-service-operator -o jsonpath={.data.DATABASE_URL}" ]; then
          printf %s "$OPERATOR_URL_B64"
        else
          echo "kubectl $* refused" >&2; printf %s "$REFUSED_URL_B64"
        fi
      }`;
      const b64 = (text: string) => Buffer.from(text).toString('base64');
      return spawnSync('bash', ['--norc', '--noprofile', '-c', `${kubectl}\n${command}`], {
        encoding: 'utf8',
        timeout: 30_000,
        env: {
          PATH: process.env.PATH,
          NS: 'users',
          PSQLRC: '/dev/null',
          OPERATOR_URL_B64: b64(urlOf(OPERATOR)),
          REFUSED_URL_B64: b64(`postgres://refused@127.0.0.1:1/none`),
        },
      });
    }

    beforeAll(async () => {
      cluster = await startThrowawayPostgres({ prefix: 'users-runbooks-', database: DATABASE });
      const admin = new pg.Client({ connectionString: cluster.url });
      await admin.connect();
      try {
        await admin.query(read('deploy/sql/roles.sql'));
        for (const { role, password } of [OPERATOR, ...OTHERS]) {
          await admin.query(`ALTER ROLE ${role} PASSWORD '${password}'`);
        }
      } finally {
        await admin.end();
      }
    }, 60_000);

    afterAll(async () => {
      await cluster?.stop();
    });

    it('runs every psql line of the runbooks, each as the operator', () => {
      expect(commands.length).toBeGreaterThanOrEqual(8);
      for (const { file, command } of commands) {
        const { status, stderr } = run(command);
        expect([file, status, stderr]).toEqual([file, 0, '']);
      }
    });

    it('the operator sees other roles’ sessions and replication, changes nothing, and is logged', async () => {
      const operator = new pg.Client({ connectionString: urlOf(OPERATOR) });
      await operator.connect();
      const app = new pg.Client({ connectionString: urlOf(OTHERS[0]) });
      await app.connect();
      try {
        await app.query(`SELECT 'visible to the operator'`);
        const { rows } = await operator.query(
          `SELECT pg_has_role('pg_monitor', 'MEMBER') AS monitor,
            current_setting('default_transaction_read_only') AS read_only,
            current_setting('log_statement') AS logged,
            (SELECT query FROM pg_stat_activity WHERE pid = $1) AS query`,
          [(await app.query('SELECT pg_backend_pid() AS pid')).rows[0].pid],
        );
        expect(rows).toEqual([
          {
            monitor: true,
            read_only: 'on',
            logged: 'all',
            query: 'SELECT pg_backend_pid() AS pid',
          },
        ]);
        await expect(operator.query('CREATE TABLE intruder (id int)')).rejects.toMatchObject({
          code: '25006',
        });
      } finally {
        await app.end();
        await operator.end();
      }
    });

    it('finds INTERNAL in the gRPC log lines as the service nests them (`"grpc":{…"code":…}`)', () => {
      const lines: string[] = [];
      const logger = pino({}, { write: (line: string) => lines.push(line.trim()) });
      for (const code of ['OK', 'INTERNAL', 'NOT_FOUND']) {
        logger.child({ grpc: { method: '/users.Users/GetUser', code } }).error('GetUser answered');
      }
      const grep = read('docs/runbooks/UsersServiceGrpcGetUserErrorBudgetBurn.md')
        .split('`')
        .find((part) => part.startsWith('kubectl') && part.includes('INTERNAL'));
      const { status, stdout } = spawnSync(
        'bash',
        ['--norc', '--noprofile', '-c', `kubectl() { printf '%s\\n' "$LOG"; }\n${grep}`],
        { encoding: 'utf8', env: { PATH: process.env.PATH, NS: 'users', LOG: lines.join('\n') } },
      );
      expect([status, stdout.trim().split('\n')]).toEqual([0, [lines[1]]]);
    });

    it('lists the transaction holding the feed back first, before an older snapshot', async () => {
      const [heldBack] = commands.filter(
        ({ file }) => file === 'UsersServiceChangeFeedHeldBack.md',
      );
      const [reader, holder] = await Promise.all(
        OTHERS.map(async (other) => {
          const client = new pg.Client({ connectionString: urlOf(other) });
          await client.connect();
          return client;
        }),
      );
      try {
        // An older transaction with a snapshot only, then one holding a transaction id.
        await reader.query('BEGIN ISOLATION LEVEL REPEATABLE READ');
        await reader.query('SELECT 1');
        await holder.query('BEGIN');
        const { rows } = await holder.query(
          'SELECT pg_backend_pid() AS pid, pg_current_xact_id()::text AS xid',
        );
        const { status, stdout } = run(heldBack.command);
        expect(status).toBe(0);
        // psql's table: the header, a rule, then the rows.
        const [, , first] = stdout.split('\n');
        expect(Number(first.split('|')[0])).toBe(rows[0].pid);
      } finally {
        await reader.end();
        await holder.end();
      }
    });
  },
);
