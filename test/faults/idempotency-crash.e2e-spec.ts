import pg from 'pg';
import {
  buildService,
  type ServiceProcess,
  startOnTestDatabase,
  waitFor,
} from '../support/service-process.js';
import { testDatabaseUrl } from '../support/test-database.js';

interface Answer {
  status: number;
  body: { id?: number; name?: string };
  replayed: boolean;
}

const KEYS = 60;
const CONCURRENCY = 20;

/** A keyed create of the user `name`; undefined when the connection died before an answer. */
async function keyedCreate(url: string, key: string, name: string): Promise<Answer | undefined> {
  try {
    const res = await fetch(`${url}/users`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'idempotency-key': key },
      body: JSON.stringify({ name }),
    });
    return {
      status: res.status,
      body: (await res.json()) as Answer['body'],
      replayed: res.headers.get('idempotent-replayed') === 'true',
    };
  } catch {
    return undefined;
  }
}

describe('idempotent creates survive a crash (e2e: SIGKILL of the built service)', () => {
  let db: pg.Client;
  let service: ServiceProcess | undefined;

  beforeAll(async () => {
    buildService();
    db = new pg.Client({ connectionString: testDatabaseUrl() });
    await db.connect();
  });
  afterAll(async () => {
    await service?.stop();
    await db.query('TRUNCATE users, posts, idempotency_keys RESTART IDENTITY CASCADE');
    await db.end();
  });

  it('replays every acknowledged create after a restart, and creates every other key at most once', async () => {
    const env = { LOG_LEVEL: 'warn', SHUTDOWN_DRAIN_MS: '0' };
    service = await startOnTestDatabase(env);

    const first = new Map<string, Answer | undefined>();
    let next = 0;
    const worker = async (url: string) => {
      while (next < KEYS) {
        const i = next++;
        first.set(`crash-${i}`, await keyedCreate(url, `crash-${i}`, `crash user ${i}`));
      }
    };
    const workers = Array.from({ length: CONCURRENCY }, () => worker(service!.url));
    // Killed mid-flight: once some creates were acknowledged, while others are still running.
    await waitFor('ten acknowledged creates', () =>
      Promise.resolve([...first.values()].filter((a) => a?.status === 201).length >= 10),
    );
    service.child.kill('SIGKILL');
    await service.exited;
    next = KEYS; // the workers stop after their current request
    await Promise.all(workers);

    service = await startOnTestDatabase(env);
    for (let i = 0; i < KEYS; i++) {
      const key = `crash-${i}`;
      const retry = await keyedCreate(service.url, key, `crash user ${i}`);
      const acknowledged = first.get(key);
      if (acknowledged?.status === 201) {
        expect({
          key,
          status: retry?.status,
          replayed: retry?.replayed,
          body: retry?.body,
        }).toEqual({ key, status: 201, replayed: true, body: acknowledged.body });
      } else {
        expect({ key, status: retry?.status }).toEqual({ key, status: 201 });
      }
      const { rows } = await db.query<{ n: number }>(
        'SELECT count(*)::int AS n FROM users WHERE name = $1',
        [`crash user ${i}`],
      );
      expect({ key, users: rows[0].n }).toEqual({ key, users: 1 });
    }
    const lost = [...first.values()].filter((answer) => answer === undefined).length;
    // The kill did cut requests in flight (else this test proves less than it says).
    expect(lost + (KEYS - first.size)).toBeGreaterThan(0);
  });
});
