// Failovers that nobody planned, on the failover cluster (test/support/failover-cluster.ts: etcd,
// two Patroni members in synchronous mode, HAProxy, the built service), under keyed creates and
// recorded reads and writes: the loss of the leader's node, a standby cut off from the leader for
// a few seconds before the leader's node is lost, and a crash of the leader's PostgreSQL (Patroni
// still running), repeated FAILOVER_ROUNDS times (default 1) in a row on one cluster. Each ends
// with all that underLoad checks (failover-under-load.ts); in the partition, a second consumer
// from a token taken while the standby was cut off also rebuilds every user created since.
// Skipped, saying so, where the Debian packages are missing; .ci/run installs them.
import {
  cluster,
  CRASH_BOUND_MS,
  DATABASE,
  describeFailover,
  NODE_LOSS_BOUND_MS,
  replaceLost,
  ROUNDS,
  roundLabel,
  service,
  STATEMENT_TIMEOUT_MS,
  useFailoverCluster,
} from '../support/failover-cluster.js';
import { usersAbove } from './failover-checks.js';
import { underLoad } from './failover-under-load.js';
import { startFeedConsumer, type FeedConsumer } from './feed-consumer.js';

const PARTITION_MS = 3 * STATEMENT_TIMEOUT_MS;

describeFailover('failover with Patroni, etcd and HAProxy: the leader lost (e2e)', () => {
  useFailoverCluster();

  for (let round = 1; round <= ROUNDS; round++) {
    const label = (name: string) => roundLabel(name, round);

    it(`survives the loss of the leader's node (round ${round})`, async () => {
      const { after } = await underLoad(label('node-loss'), NODE_LOSS_BOUND_MS, async (leader) => {
        const killed = await leader.kill();
        expect(killed.length).toBeGreaterThan(2);
        return cluster!.waitForPrimary({ exclude: leader, withSyncStandby: false });
      });
      await replaceLost(after);
    }, 150_000);

    it(`survives a standby cut off for a few seconds, then the loss of the leader's node (round ${round})`, async () => {
      let partition = { from: 0, to: 0 };
      let duringPartition: Promise<{ feed: FeedConsumer; at: number }> | undefined;
      const { load, after } = await underLoad(
        label('partition'),
        NODE_LOSS_BOUND_MS + PARTITION_MS,
        async (leader) => {
          const standby = cluster!.members.find((m) => m !== leader)!;
          const receiver = await standby.walReceiverPid();
          expect(receiver).toBeDefined();
          // The standby stops taking WAL: the leader's commits wait for it.
          process.kill(receiver!, 'SIGSTOP');
          partition = { from: Date.now(), to: 0 };
          // A second consumer starts from a list's Changes-Token taken now: the leader has used
          // transaction ids the standby never gets, which the promoted standby hands out again.
          duringPartition = startFeedConsumer(service!.url).then((feed) => ({
            feed,
            at: Date.now(),
          }));
          try {
            // The partition lasts a set time (it is the fault, not a wait for something), long
            // enough for a commit waiting on the standby to reach the statement timeout.
            await new Promise((resolve) => setTimeout(resolve, PARTITION_MS));
            partition.to = Date.now();
            await leader.kill();
          } finally {
            // The link never comes back before the leader is gone: what the leader sent meanwhile
            // sits unread in the frozen receiver's socket, and a partition would have lost it on
            // the wire. SIGKILL (which also ends a stopped process) drops it with the socket;
            // PostgreSQL restarts the standby's processes and replays its own WAL.
            process.kill(receiver!, 'SIGKILL');
          }
          return cluster!.waitForPrimary({ exclude: leader, withSyncStandby: false });
        },
      );
      // The partition did hold commits back: a create sent during it failed or waited past the
      // statement timeout (else the scenario proved nothing about commits waiting on the standby).
      const held = load.attempts.filter(
        (a) =>
          a.kind === 'create' &&
          a.sentAt >= partition.from &&
          a.sentAt < partition.to &&
          (!a.ok || a.doneAt - a.sentAt >= STATEMENT_TIMEOUT_MS),
      );
      expect(held.length).toBeGreaterThan(0);
      // The consumer from the partition's token misses nothing of the new primary: every user
      // created after its token is rebuilt from its events, at the table's version.
      const { feed, at } = await duringPartition!;
      expect(at).toBeLessThan(partition.to);
      await feed.catchUp();
      const verdict = feed.verdict();
      const createdSince = (record: Record<number, number>) =>
        Object.fromEntries(Object.entries(record).filter(([id]) => Number(id) > feed.newestId));
      const table = await usersAbove(after.url(DATABASE), feed.newestId);
      console.log(
        `failover ${label('partition')}: the consumer from a token taken during the partition ` +
          `got ${verdict.events} events (${verdict.failedPolls} failed polls), rebuilt ` +
          `${Object.keys(createdSince(verdict.rebuilt)).length} users created since against ` +
          `${Object.keys(table).length} in the table`,
      );
      expect(verdict.outOfOrder.filter((id) => id > feed.newestId)).toEqual([]);
      expect(createdSince(verdict.rebuilt)).toEqual(table);
      expect(Object.keys(table).length).toBeGreaterThan(0);
      await replaceLost(after);
    }, 150_000);

    it(`survives a crash of the leader's PostgreSQL: Patroni hands over at once (round ${round})`, async () => {
      const { after, createFailures } = await underLoad(
        label('crash'),
        CRASH_BOUND_MS,
        async (leader) => {
          const standby = cluster!.members.find((m) => m !== leader)!;
          const postmaster = await leader.killPostmaster();
          expect(postmaster).toBeGreaterThan(0);
          const next = await cluster!.waitForPrimary({ exclude: leader, withSyncStandby: false });
          expect(next).toBe(standby);
          // Patroni itself was not touched: it demoted its node rather than restarting PostgreSQL.
          expect(leader.running()).toBe(true);
          return next;
        },
      );
      // Creates in flight met closed connections (a COMMIT among them, its outcome then unknown):
      // the service reran them, so no client saw an error.
      expect(createFailures).toEqual([]);
      // The crashed node comes back fresh for the next round.
      if (round < ROUNDS) await replaceLost(after);
    }, 150_000);
  }
});
