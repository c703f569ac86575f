import { Injectable } from '@nestjs/common';
import { GoneError, InvalidArgumentError } from '../common/errors.js';
import { AppConfig } from '../config/app-config.js';
import { decodeChangeToken, encodeChangeToken, type FeedKey, isAfter } from './change-token.js';
import { ChangesPoller } from './changes-poller.js';
import { ChangesRepository, parseSnapshotKey } from './changes.repository.js';
import type { UserChange } from './user-change.entity.js';

/** A watch stream says it is alive at least this often, so idle-timeouts never cut it. */
export const HEARTBEAT_MS = 5000;
/** Events per message batch of a watch stream. */
const WATCH_PAGE = 100;

const keyOf = (change: UserChange): FeedKey => ({
  position: BigInt(change.position),
  id: BigInt(change.id),
});

/** Events and the token to continue after them. */
export interface ChangesPage {
  events: UserChange[];
  /** The token after the last event; the one read after when there is none. */
  next: string;
}

/** What a watch stream sends: a page of events, or a heartbeat with the current token. */
export type WatchItem = ChangesPage & { heartbeat: boolean };

/**
 * The change feed of users, for HTTP and gRPC alike: pages after a token, long polls and
 * streams. Tokens are checked against the feed as it is read (ChangesRepository.page).
 */
@Injectable()
export class ChangesService {
  constructor(
    private readonly changes: ChangesRepository,
    private readonly poller: ChangesPoller,
    private readonly config: AppConfig,
  ) {}

  /**
   * Up to `limit` events after `token` (none: from the oldest retained). With nothing to give,
   * waits up to `waitMs` for the first new event (a long poll), until `signal` aborts (the client
   * left) or the process drains for shutdown; then answers the empty page.
   */
  async page(
    token: string | undefined,
    limit: number,
    waitMs = 0,
    signal?: AbortSignal,
  ): Promise<ChangesPage> {
    const deadline = Date.now() + waitMs;
    let { events, next } = await this.read(token ? decodeChangeToken(token) : undefined, limit);
    while (events.length === 0 && (await this.poller.wait(next, deadline - Date.now(), signal))) {
      ({ events, next } = await this.read(next, limit));
    }
    return { events, next: encodeChangeToken(next) };
  }

  /**
   * The pages after `token` as they come, and a heartbeat carrying the current token whenever
   * HEARTBEAT_MS passes without a page. Ends only when `signal` aborts or the process drains for
   * shutdown.
   */
  async *watch(token: string | undefined, signal: AbortSignal): AsyncGenerator<WatchItem> {
    let after = token ? decodeChangeToken(token) : undefined;
    // The first read answers at once, events or a heartbeat: the client learns where it stands.
    let sentAt = 0;
    for (;;) {
      if (signal.aborted || this.poller.isClosed) return;
      const { events, next } = await this.read(after, WATCH_PAGE);
      after = next;
      const heartbeatDue = Date.now() - sentAt >= HEARTBEAT_MS;
      if (events.length > 0 || heartbeatDue) {
        yield { events, next: encodeChangeToken(next), heartbeat: events.length === 0 };
        sentAt = Date.now();
      }
      if (events.length === 0)
        await this.poller.wait(next, sentAt + HEARTBEAT_MS - Date.now(), signal);
    }
  }

  /** The token right after `change`: a stream's client resumes from it. */
  tokenAfter(change: UserChange): string {
    return encodeChangeToken(keyOf(change));
  }

  /**
   * SQL that a list reads in its page's own statement (ListScope.snapshotValue): where the feed
   * stood in that snapshot (ChangesRepository.snapshotKeySql). listToken makes its token.
   */
  get listSql(): string {
    return this.changes.snapshotKeySql;
  }

  /**
   * `Changes-Token` of `GET /users`, from the value of listSql read with the page: the page
   * reflects every event up to it, and the feed from it delivers every change after.
   */
  listToken(value: string): string {
    return encodeChangeToken(parseSnapshotKey(value));
  }

  /** A page after `after`, once the token is known to be neither expired nor made up. */
  private async read(
    after: FeedKey | undefined,
    limit: number,
  ): Promise<{ events: UserChange[]; next: FeedKey }> {
    const { events, start, purged, newest } = await this.changes.page(after, limit);
    if (after && purged && isAfter(purged, after)) {
      throw new GoneError(
        `the change token has expired: changes after it were purged (kept ${this.config.changes.retentionHours} hours); list the users again and follow the feed from their Changes-Token`,
      );
    }
    // Every token the service issues lies at or below a horizon, which is at most the newest
    // transaction id: one beyond it names changes that do not exist yet, and following it would
    // pass over them once they do.
    if (after && after.position > newest) {
      throw new InvalidArgumentError(
        'the change token is invalid: it points past the newest change',
      );
    }
    const last = events.at(-1);
    return { events, next: last ? keyOf(last) : start };
  }
}
