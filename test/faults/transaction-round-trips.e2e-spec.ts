// Round trips are what a keyed create costs most (bench/README.md): the transaction scope sends
// BEGIN with the first statement and the last statements with the COMMIT, so a keyed create takes
// two, a replay's undo-and-store two, a single statement outside a transaction one. Counted on
// the connection's socket: a round trip is a network write made after the server last answered.
// A change that adds one fails here.
import { DataSource } from 'typeorm';
import { AppConfig } from '../../src/config/app-config.js';
import { validateEnv } from '../../src/config/env.validation.js';
import { dataSourceOptions } from '../../src/database/database-options.js';
import { PrimaryPool } from '../../src/database/queryable.js';
import { TransactionScope } from '../../src/database/transaction-scope.js';
import { driverPool } from '../../src/internals/typeorm-driver.js';
import { testDatabaseUrl } from '../support/test-app.js';

interface Socket {
  write(...args: unknown[]): boolean;
  prependListener(event: 'data', listener: () => void): void;
}

describe('TransactionScope round trips (e2e)', () => {
  let dataSource: DataSource;
  let scope: TransactionScope;
  let roundTrips = 0;
  const counted = new WeakSet<object>();

  /** Counts, on every connection the pool hands out, the writes that open a new round trip. */
  function countRoundTrips(stream: Socket): void {
    if (counted.has(stream)) return;
    counted.add(stream);
    let answered = true;
    const write = stream.write.bind(stream);
    stream.write = (...args: unknown[]) => {
      if (answered) roundTrips++;
      answered = false;
      return write(...args);
    };
    // Before pg's own listener, which may write the next queued query while it reads this answer.
    stream.prependListener('data', () => {
      answered = true;
    });
  }

  const roundTripsOf = async (work: () => Promise<unknown>) => {
    roundTrips = 0;
    await work();
    return roundTrips;
  };

  beforeAll(async () => {
    const config = AppConfig.fromEnv(validateEnv({ DATABASE_URL: testDatabaseUrl() }));
    dataSource = new DataSource(dataSourceOptions(config.database));
    await dataSource.initialize();
    await dataSource.query('CREATE TABLE IF NOT EXISTS round_trip_probe (n int PRIMARY KEY)');
    driverPool(dataSource)!.on('acquire', (client) =>
      countRoundTrips((client as unknown as { connection: { stream: Socket } }).connection.stream),
    );
    scope = new TransactionScope(dataSource, new PrimaryPool(dataSource));
  });

  afterAll(async () => {
    await dataSource.query('DROP TABLE IF EXISTS round_trip_probe');
    await dataSource.destroy();
  });

  it('runs a keyed create in two: BEGIN with its write, then the key with the COMMIT', async () => {
    const trips = await roundTripsOf(() =>
      scope.run(async (tx) => {
        await tx.query('INSERT INTO round_trip_probe VALUES (1)');
        await tx.commit('SET LOCAL lock_timeout = 100', 'INSERT INTO round_trip_probe VALUES (2)');
      }),
    );
    expect(trips).toBe(2);
  });

  it('undoes a create and stores its outcome in two', async () => {
    const trips = await roundTripsOf(() =>
      scope.run(async (tx) => {
        await tx.query('SELECT count(*) FROM round_trip_probe');
        await tx.undoAndCommit('INSERT INTO round_trip_probe VALUES (3)');
      }),
    );
    expect(trips).toBe(2);
  });

  it('rolls back a failed transaction in one more', async () => {
    const trips = await roundTripsOf(() =>
      scope
        .run(async (tx) => {
          await tx.query('INSERT INTO round_trip_probe VALUES (1)');
        })
        .catch((error: { code?: string }) => expect(error.code).toBe('23505')),
    );
    expect(trips).toBe(2);
  });

  it('sends a statement outside a transaction in one, and a transaction that sent nothing in none', async () => {
    expect(
      await roundTripsOf(() =>
        scope.queryable().query('UPDATE round_trip_probe SET n = n WHERE n = 1'),
      ),
    ).toBe(1);
    expect(await roundTripsOf(() => scope.run(() => Promise.resolve('nothing to send')))).toBe(0);
  });
});
