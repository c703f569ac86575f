// One fault on the failover cluster (test/support/failover-cluster.ts) under keyed creates, and
// reads and PATCHes (with and without If-Match) and DELETEs on a few users, and what it must end
// with: no acknowledged create lost, one row per Idempotency-Key, every create answered 201 in the
// end, every user's history linearizable (what readers saw included: no read ever showed a write
// the failover then took back), a consumer that follows the change feed through the fault given
// every committed change in order (replayed, it is the new primary's users table), no commit's
// wait for the standby cut short in the old leader's log, readiness back to 200, the same service
// process, and recovery within the fault's bound.
import type { PatroniMember } from '../../scripts/lib/patroni.mjs';
import {
  cluster,
  CONNECT_TIMEOUT_MS,
  DATABASE,
  FAILOVER_RETRY_MS,
  READY,
  ready,
  service,
  servicePid,
  STATEMENT_TIMEOUT_MS,
  waitForProxyOn,
} from '../support/failover-cluster.js';
import { waitFor } from '../support/service-process.js';
import { CANCELLED_WAIT } from '../support/sync-standby.js';
import { checkCreates, checkHistories, describeHistory, usersAbove } from './failover-checks.js';
import { startFeedConsumer } from './feed-consumer.js';
import { startHistoryLoad } from './history-load.js';
import { startKeyedLoad, type LoadFigures } from './keyed-load.js';

/** Creates acknowledged after recovery before the load stops: the service is writing again. */
const CREATES_AFTER_RECOVERY = 20;
/** Users whose histories are recorded in each scenario. */
const USERS = 5;
/**
 * How a backend ends when the server shuts down (SIGTERM): a planned switchover's demotion stops
 * the old leader with a fast shutdown, which ends every session, those of commits waiting for the
 * standby included ("canceling the wait … and terminating connection due to administrator
 * command"). Unlike a cancel, no session of that server reads again, and its WAL goes to the
 * standby before the standby is promoted: such a commit is one of unknown outcome, which the
 * histories model. Only the switchover shuts the leader down; elsewhere the line is a failure.
 */
const SHUTDOWN_TERMINATION = /terminating connection due to administrator command/i;
const origin = performance.now();

/** Users for one scenario's histories, created through the service before its load. */
async function createUsers(label: string) {
  const users: { id: number; name: string }[] = [];
  for (let i = 0; i < USERS; i++) {
    const name = `${label}-user-${i}`;
    const response = await fetch(`${service!.url}/users`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name }),
    });
    expect(response.status).toBe(201);
    users.push({ id: ((await response.json()) as { id: number }).id, name });
  }
  return users;
}

/**
 * Runs the loads around `fault` (which resolves with the new primary once the fault is
 * injected and the cluster has elected one), waits for readiness and fresh creates, then checks
 * every acknowledged create against the new primary, straight to it (not through HAProxy), and
 * every user's history.
 */
export async function underLoad(
  label: string,
  bound: number,
  fault: (primary: PatroniMember) => Promise<PatroniMember>,
  { shutsDownLeader = false } = {},
) {
  const before = await cluster!.waitForPrimary();
  await waitForProxyOn(before);
  // The leader's log from here on: what an earlier scenario left in it is not this one's.
  const watchedBefore = before.watched().length;
  const prefix = `${label}-${Date.now()}`;
  // The change feed, followed from a list's token through the whole fault.
  const feed = await startFeedConsumer(service!.url);
  const users = await createUsers(prefix);
  // Longer than the service may hold a request: its retries, then one more attempt.
  const attemptTimeoutMs = FAILOVER_RETRY_MS + STATEMENT_TIMEOUT_MS + CONNECT_TIMEOUT_MS + 2000;
  const load = startKeyedLoad({ baseUrl: service!.url, prefix, attemptTimeoutMs });
  const history = startHistoryLoad({ baseUrl: service!.url, users, prefix, attemptTimeoutMs });
  const observe = async () => {
    const enough = (since: number, count: number) => () =>
      Promise.resolve(load.ackedSince(since) >= count);
    await waitFor('creates before the fault', enough(0, 20), 30_000);
    const faultAt = Date.now();
    const after = await fault(before);
    const promotedAt = Date.now();
    await waitFor('readiness 200 after the fault', ready, bound + 30_000);
    const readyMs = Date.now() - faultAt;
    await waitFor(
      `${CREATES_AFTER_RECOVERY} creates after recovery`,
      enough(Date.now(), CREATES_AFTER_RECOVERY),
      30_000,
    );
    return { faultAt, promotedAt, readyMs, after };
  };
  const { faultAt, promotedAt, readyMs, after } = await observe().finally(() =>
    Promise.all([load.stop(), history.stop()]),
  );
  await history.finalReads();
  await feed.catchUp();
  const firstCreate = Math.min(
    ...load.attempts
      .filter((a) => a.kind === 'create' && a.ok && a.doneAt >= promotedAt)
      .map((a) => a.doneAt),
  );
  const figures: LoadFigures = load.figures(faultAt);
  const creates = await checkCreates(after.url(DATABASE), load.creates);
  const notAcked = load.creates.filter((c) => c.id === undefined);
  const createFailures = load.attempts
    .filter((a) => a.kind === 'create' && !a.ok)
    .map((a) => a.status);
  const verdicts = checkHistories(users, history.histories);
  const historyFigures = history.figures();
  const endedWaits = before
    .watched()
    .slice(watchedBefore)
    .filter((line) => CANCELLED_WAIT.test(line));
  const shutdownEnded = shutsDownLeader
    ? endedWaits.filter((line) => SHUTDOWN_TERMINATION.test(line))
    : [];
  const cancelledWaits = endedWaits.filter((line) => !shutdownEnded.includes(line));
  const feedVerdict = feed.verdict();
  const table = await usersAbove(after.url(DATABASE), feed.newestId);

  console.log(
    `failover ${label}: ${figures.creates} creates (${figures.acknowledged} acknowledged, ` +
      `${figures.gaveUp} gave up), ${figures.failedCreateAttempts} failed create attempts, ` +
      `${figures.failedReads} failed reads (${figures.readsNotFound} 404), ` +
      `failures by status ${JSON.stringify(figures.failuresByStatus)}, ` +
      `stall ${figures.stallMs} ms, recovery ${figures.recoveryMs} ms (bound ${bound} ms), ` +
      `readiness 200 after ${readyMs} ms; new primary ${after.name} reported by Patroni ` +
      `${promotedAt - faultAt} ms after the fault, first 201 ${firstCreate - promotedAt} ms ` +
      `after that; ${creates.lost.length} acknowledged creates lost, ` +
      `${creates.duplicates.length} keys duplicated; histories of ${USERS} users: ` +
      `${historyFigures.operations} operations (${historyFigures.reads} reads, ` +
      `${historyFigures.indeterminate} writes of unknown outcome), ` +
      `${verdicts.filter((v) => v.linearizable).length} of ${USERS} linearizable; ` +
      `${cancelledWaits.length} commit waits cut short in the old leader's log` +
      (shutsDownLeader ? ` (${shutdownEnded.length} ended by its shutdown)` : '') +
      `; change feed: ` +
      `${feedVerdict.events} events (${feedVerdict.failedPolls} failed polls), ` +
      `${Object.keys(feedVerdict.rebuilt).length} users rebuilt against ` +
      `${Object.keys(table).length} in the table, ${feedVerdict.outOfOrder.length} out of order`,
  );
  for (const verdict of verdicts.filter((v) => !v.linearizable)) {
    console.log(
      `user ${verdict.user}: not linearizable\n` +
        describeHistory(history.histories.get(verdict.user)!, origin),
    );
  }

  expect(creates).toEqual({ lost: [], duplicates: [] });
  expect(notAcked.map((c) => c.key)).toEqual([]);
  expect(historyFigures.unexpected).toEqual([]);
  expect(verdicts.filter((v) => !v.linearizable).map((v) => v.user)).toEqual([]);
  // The leader's log was captured (else the next check proves nothing), and no commit's wait
  // for the standby was cut short in it.
  expect(before.watched().some((line) => READY.test(line))).toBe(true);
  expect(cancelledWaits).toEqual([]);
  // The feed gave every committed change, each user's versions in order: replayed, it is the
  // users table of the new primary (ids and versions, deleted users absent).
  expect(feedVerdict.outOfOrder).toEqual([]);
  expect(feedVerdict.rebuilt).toEqual(table);
  expect(figures.acknowledged).toBeGreaterThanOrEqual(20 + CREATES_AFTER_RECOVERY);
  expect(await ready()).toBe(true);
  expect(service!.alive()).toBe(true);
  expect(service!.pid).toBe(servicePid);
  expect(figures.recoveryMs).toBeLessThanOrEqual(bound);
  return { after, load, figures, createFailures };
}
