// Load for the change feed's fault spec: writers changing users in SQL transactions with short
// waits inside them (so transactions overlap, commit out of xid order and wait on each other's
// row locks), a writer going through the service's HTTP API, and consumers following the feed by
// HTTP long poll. Every loop stops when told, and each records what the end checks need.
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';

/** A change as the feed names it: `<user>.<version>`. */
export type ChangeKey = string;
const keyOf = (user: number, version: number): ChangeKey => `${user}.${version}`;
const random = (n: number) => Math.floor(Math.random() * n);

/**
 * `count` writers, each on its own connection, each transaction 1 to 4 changes of users (updates
 * and deletes of random existing users, in id order so that writers never deadlock on each
 * other's rows, then creates), with 0 to 2 ms pauses between statements. A failed transaction
 * (the database stopped, a deadlock on the counters) is dropped and the connection made again.
 */
export class SqlWriters {
  /** Changes whose COMMIT was acknowledged. */
  readonly acknowledged = new Set<ChangeKey>();
  failures = 0;
  private readonly live: number[] = [];
  private stopped = false;
  private running: Promise<void>[] = [];

  constructor(
    private readonly url: string,
    private readonly count: number,
  ) {}

  start(): void {
    this.running = Array.from({ length: this.count }, (_, n) => this.writer(n));
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.all(this.running);
  }

  private async writer(n: number): Promise<void> {
    let client: pg.Client | undefined;
    for (let done = 0; !this.stopped; done++) {
      try {
        if (!client) {
          client = new pg.Client({ connectionString: this.url });
          client.on('error', () => {});
          await client.connect();
        }
        const { changes, deleted, created } = await this.transaction(client, `w${n}-${done}`);
        for (const change of changes) this.acknowledged.add(change);
        for (const id of deleted) this.forget(id);
        this.live.push(...created);
      } catch {
        this.failures++;
        await client?.end().catch(() => {});
        client = undefined;
        await sleep(50 + random(50));
      }
    }
    await client?.end().catch(() => {});
  }

  private async transaction(client: pg.Client, name: string) {
    const changes: ChangeKey[] = [];
    const deleted: number[] = [];
    const created: number[] = [];
    const pause = () => sleep(random(3));
    const ops = 1 + random(4);
    const picks = [...new Set(Array.from({ length: ops }, () => this.pick()))]
      .filter((id): id is number => id !== undefined)
      .sort((a, b) => a - b);
    await client.query('BEGIN');
    for (const id of picks) {
      await pause();
      if (random(8) === 0) {
        const { rows } = await client.query('DELETE FROM users WHERE id = $1 RETURNING version', [
          id,
        ]);
        if (rows[0]) changes.push(keyOf(id, rows[0].version + 1));
        if (rows[0]) deleted.push(id);
      } else {
        const { rows } = await client.query(
          'UPDATE users SET name = $2 WHERE id = $1 RETURNING version',
          [id, name],
        );
        if (rows[0]) changes.push(keyOf(id, rows[0].version));
      }
    }
    for (let i = picks.length; i < ops || this.live.length < 200; i++) {
      await pause();
      const { rows } = await client.query(
        'INSERT INTO users (name) VALUES ($1) RETURNING id, version',
        [name],
      );
      changes.push(keyOf(rows[0].id, rows[0].version));
      created.push(rows[0].id);
      if (created.length >= 4) break;
    }
    await pause();
    await client.query('COMMIT');
    return { changes, deleted, created };
  }

  private pick(): number | undefined {
    return this.live.length === 0 ? undefined : this.live[random(this.live.length)];
  }

  private forget(id: number): void {
    const at = this.live.indexOf(id);
    if (at !== -1) this.live.splice(at, 1);
  }
}

/**
 * Creates and PATCHes through the service's HTTP API, `concurrency` at a time; records the
 * changes it was answered 2xx for (the version from the ETag, `"<id>.<version>"`).
 */
export class HttpWriter {
  readonly acknowledged = new Set<ChangeKey>();
  private stopped = false;
  private running: Promise<void>[] = [];
  private readonly mine: number[] = [];

  constructor(private readonly base: () => string) {}

  start(concurrency = 2): void {
    this.running = Array.from({ length: concurrency }, () => this.loop());
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.all(this.running);
  }

  private async loop(): Promise<void> {
    for (let n = 0; !this.stopped; n++) {
      const id = this.mine[random(this.mine.length)];
      const patch = id !== undefined && n % 2 === 1;
      try {
        const res = await fetch(`${this.base()}/users${patch ? `/${id}` : ''}`, {
          method: patch ? 'PATCH' : 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ name: `http ${n}` }),
          signal: AbortSignal.timeout(10_000),
        });
        const etag = /^"(\d+)\.(\d+)"$/.exec(res.headers.get('etag') ?? '');
        if (res.ok && etag) {
          this.acknowledged.add(`${etag[1]}.${etag[2]}`);
          if (!patch) this.mine.push(Number(etag[1]));
        }
        await res.arrayBuffer();
      } catch {
        await sleep(100);
      }
    }
  }
}

interface Delivered {
  user: number;
  version: number;
  type: string;
}

/**
 * Follows the feed by HTTP long poll from the start, keeping its token across errors, a killed
 * service (`base()` names the current one) and a stopped database; records every event in the
 * order it arrived. A 400 or 410 is a failure of the feed, kept in `refusals`.
 */
export class FeedConsumer {
  readonly arrived: Delivered[] = [];
  readonly refusals: string[] = [];
  errors = 0;
  private token?: string;
  private stopped = false;
  private running?: Promise<void>;

  constructor(private readonly base: () => string) {}

  start(): void {
    this.running = this.loop();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.running;
  }

  /** The distinct changes delivered so far. */
  keys(): Set<ChangeKey> {
    return new Set(this.arrived.map(({ user, version }) => keyOf(user, version)));
  }

  private async loop(): Promise<void> {
    while (!this.stopped) {
      const after = this.token === undefined ? '' : `&after=${this.token}`;
      try {
        const res = await fetch(`${this.base()}/users/changes?limit=1000&wait=2${after}`, {
          signal: AbortSignal.timeout(15_000),
        });
        if (res.status === 400 || res.status === 410) {
          this.refusals.push(`${res.status} ${await res.text()}`);
          return;
        }
        if (res.status !== 200) throw new Error(`status ${res.status}`);
        const body = (await res.json()) as {
          events: { type: string; data: { id: number; version: number } }[];
          next: string;
        };
        for (const { type, data } of body.events) {
          this.arrived.push({ user: data.id, version: data.version, type });
        }
        this.token = body.next;
      } catch {
        this.errors++;
        await sleep(100);
      }
    }
  }
}

/**
 * The consumer's view after deduplication by user and version: the problems with the order (a
 * new version that is not the previous one plus one), and the users it rebuilds (id → version,
 * deleted ones absent).
 */
export function replay(arrived: Delivered[]): {
  disorder: string[];
  duplicates: number;
  users: Map<number, number>;
} {
  const last = new Map<number, number>();
  const users = new Map<number, number>();
  const disorder: string[] = [];
  let duplicates = 0;
  for (const { user, version, type } of arrived) {
    const previous = last.get(user) ?? 0;
    if (version <= previous) {
      duplicates++;
      continue;
    }
    if (version !== previous + 1) disorder.push(`user ${user}: ${version} after ${previous}`);
    last.set(user, version);
    if (type === 'users.user.deleted.v1') users.delete(user);
    else users.set(user, version);
  }
  return { disorder, duplicates, users };
}
