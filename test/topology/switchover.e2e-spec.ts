// A planned switchover on the failover cluster (test/support/failover-cluster.ts: etcd, two
// Patroni members in synchronous mode, HAProxy, the built service) under keyed creates and
// recorded reads and writes, repeated FAILOVER_ROUNDS times (default 1) in a row on one cluster.
// Besides all that any fault must end with (underLoad, failover-under-load.ts), a switchover must
// not show at all to a client sending keyed creates: the service retries them itself. Skipped,
// saying so, where the Debian packages are missing; .ci/run installs them.
import {
  cluster,
  describeFailover,
  ROUNDS,
  roundLabel,
  SWITCHOVER_BOUND_MS,
  SWITCHOVER_STALL_MS,
  useFailoverCluster,
} from '../support/failover-cluster.js';
import { underLoad } from './failover-under-load.js';

describeFailover('failover with Patroni, etcd and HAProxy: a planned switchover (e2e)', () => {
  useFailoverCluster();

  for (let round = 1; round <= ROUNDS; round++) {
    it(`survives a planned switchover without an error for keyed creates (round ${round})`, async () => {
      const { figures, createFailures } = await underLoad(
        roundLabel('switchover', round),
        SWITCHOVER_BOUND_MS,
        async (leader) => {
          const candidate = cluster!.members.find((m) => m !== leader)!;
          const answer = await cluster!.switchover(leader, candidate);
          expect(answer.status).toBe(200);
          const next = await cluster!.waitForPrimary({ exclude: leader, withSyncStandby: false });
          expect(next).toBe(candidate);
          return next;
        },
        { shutsDownLeader: true },
      );
      // Every create sent across the switchover was answered 201 the first time: the service
      // retried it itself, and no client retry was needed.
      expect(createFailures).toEqual([]);
      expect(figures.stallMs).toBeLessThanOrEqual(SWITCHOVER_STALL_MS);
    }, 120_000);
  }
});
