// Reading the change feed in the specs: pages over HTTP until the feed is drained, and the event
// a change should produce, as a whole body.
import type request from 'supertest';
import type { WatchUserChangesResponse } from '../../scripts/lib/grpc-client.mjs';
import { ISO_DATE } from './expected-errors.js';

export interface FeedEvent {
  specversion: string;
  id: string;
  source: string;
  type: string;
  subject: string;
  time: string;
  sequence: string;
  datacontenttype: string;
  data: { id: number; version: number; changed: string[] };
}

/** Every event after `after` (none: from the oldest), page by page; and the token after them. */
export async function drainFeed(
  http: () => ReturnType<typeof request>,
  after?: string,
  { limit = 1000, headers = {} }: { limit?: number; headers?: Record<string, string> } = {},
): Promise<{ events: FeedEvent[]; next: string }> {
  const events: FeedEvent[] = [];
  let token = after;
  // Bounded: a page is never empty while events follow.
  for (let page = 0; page < 10_000; page++) {
    const query: Record<string, string | number> = { limit };
    if (token !== undefined) query.after = token;
    const res = await http().get('/users/changes').query(query).set(headers).expect(200);
    const body = res.body as { events: FeedEvent[]; next: string };
    events.push(...body.events);
    token = body.next;
    if (body.events.length < limit) return { events, next: body.next };
  }
  throw new Error('the feed did not end within 10,000 pages');
}

const CHANGED_ON_CREATE = ['name', 'email', 'role'];

/** The CloudEvent of `type` for user `id` at `version`. */
export function feedEvent(
  type: 'created' | 'updated' | 'deleted',
  id: number,
  version: number,
  changed: string[] = type === 'created' ? CHANGED_ON_CREATE : [],
): FeedEvent {
  return {
    specversion: '1.0',
    id: `${id}.${version}`,
    source: '/users-service',
    type: `users.user.${type}.v1`,
    subject: String(id),
    time: expect.stringMatching(ISO_DATE),
    sequence: String(version).padStart(10, '0'),
    datacontenttype: 'application/json',
    data: { id, version, changed },
  };
}

/** `[user, version]` of each event, for comparing orders. */
export const versions = (events: FeedEvent[]) =>
  events.map((event) => [event.data.id, event.data.version]);

/** Whether a WatchUserChanges message is a heartbeat (no event). */
export const isHeartbeat = (message: WatchUserChangesResponse) => message.content === 'heartbeat';

/** A WatchUserChanges message's [user id, version]. */
export const versionOf = (message: WatchUserChangesResponse) => [
  message.event?.data.id,
  message.event?.data.version,
];
