// A consumer of the change feed for the failover test: it takes a list's Changes-Token, then
// long-polls GET /users/changes through the whole fault, resuming from its last token after
// every failed poll (a 503 while no primary answers, a cut connection), as a real consumer does.
// What it received is then held against the users table of the new primary: nothing committed
// may be missing, and each user's versions must have come in order.
import type { FeedEvent } from '../support/changes-feed.js';

export interface FeedVerdict {
  events: number;
  failedPolls: number;
  /** Users whose versions did not arrive as 1, 2, 3, … (after dropping repeats). */
  outOfOrder: number[];
  /** What the events rebuild (user → version, deleted users absent) against the table. */
  rebuilt: Record<number, number>;
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Lists the users (the newest first) for a Changes-Token, and follows the feed from it. `newestId`
 * is the newest user then: every user above it was created after the token.
 */
export async function startFeedConsumer(baseUrl: string, { maxMs = 150_000 } = {}) {
  const list = await fetch(`${baseUrl}/users?sort=-id&limit=1`);
  let token = list.headers.get('changes-token');
  if (list.status !== 200 || !token) throw new Error(`no Changes-Token (${list.status})`);
  const [newest] = (await list.json()) as { id: number }[];
  const newestId = newest?.id ?? 0;
  const events: FeedEvent[] = [];
  let failedPolls = 0;
  let stopping = false;
  const started = Date.now();

  /** One page after the token; false when the poll failed. */
  const poll = async (wait: number): Promise<FeedEvent[] | undefined> => {
    try {
      const url = `${baseUrl}/users/changes?limit=1000&wait=${wait}&after=${token}`;
      const response = await fetch(url, { signal: AbortSignal.timeout(wait * 1000 + 10_000) });
      if (response.status !== 200) throw new Error(`status ${response.status}`);
      const page = (await response.json()) as { events: FeedEvent[]; next: string };
      events.push(...page.events);
      token = page.next;
      return page.events;
    } catch {
      failedPolls++;
      return undefined;
    }
  };

  const following = (async () => {
    while (!stopping && Date.now() - started < maxMs) {
      if (!(await poll(1))) await pause(200);
    }
  })();

  return {
    newestId,
    /** Stops following, then reads on until the feed has nothing more (bounded). */
    async catchUp(): Promise<void> {
      stopping = true;
      await following;
      for (let attempt = 0; attempt < 200; attempt++) {
        const page = await poll(0);
        if (page && page.length === 0) return;
        if (!page) await pause(200);
      }
      throw new Error('the feed never came to an end');
    },
    verdict(): FeedVerdict {
      const seen = new Map<number, number[]>();
      for (const { data } of events) {
        const versions = seen.get(data.id) ?? [];
        // At-least-once: a repeat of the last version is dropped, as a consumer dedupes.
        if (versions.at(-1) !== data.version) versions.push(data.version);
        seen.set(data.id, versions);
      }
      const outOfOrder: number[] = [];
      const rebuilt: Record<number, number> = {};
      for (const [user, versions] of seen) {
        // Every user the fault's load touched was created after the token: 1, 2, 3, …
        if (versions.some((version, i) => version !== i + 1)) outOfOrder.push(user);
        const last = events.findLast((event) => event.data.id === user)!;
        if (last.type !== 'users.user.deleted.v1') rebuilt[user] = versions.at(-1)!;
      }
      return { events: events.length, failedPolls, outOfOrder, rebuilt };
    },
  };
}

export type FeedConsumer = Awaited<ReturnType<typeof startFeedConsumer>>;
