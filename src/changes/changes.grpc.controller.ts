import { once } from 'node:events';
import { Controller, UseFilters } from '@nestjs/common';
import { GrpcMethod, RpcException } from '@nestjs/microservices';
import {
  type Metadata,
  type ServerUnaryCall,
  type ServerWritableStream,
  status,
} from '@grpc/grpc-js';
import { Observable } from 'rxjs';
import { RequiredScope } from '../auth/auth.decorators.js';
import { InvalidArgumentError } from '../common/errors.js';
import { GrpcExceptionsFilter } from '../grpc/grpc-exceptions.filter.js';
import { GrpcObservability, type ObservedGrpcMethod } from '../grpc/grpc-observability.js';
import { ChangesService } from './changes.service.js';
import {
  DEFAULT_CHANGES_LIMIT,
  MAX_CHANGES_LIMIT,
  MAX_WAIT_S,
} from './dto/list-changes-query.dto.js';
import { UserChangeEventDto } from './dto/user-change-event.dto.js';
import type { UserChange } from './user-change.entity.js';

/** proto/users.proto `ListUserChangesRequest`. */
export interface ListUserChangesRequest {
  page_token: string;
  page_size: number;
  wait_seconds: number;
}

/** proto/users.proto `UserChangeEvent`: the CloudEvent's attributes, snake_case. */
export interface UserChangeEventMessage {
  id: string;
  source: string;
  spec_version: string;
  type: string;
  subject: string;
  time: string;
  sequence: string;
  data_content_type: string;
  data: { id: number; version: number; changed: string[] };
}

export interface ListUserChangesResponse {
  events: UserChangeEventMessage[];
  next_page_token: string;
}

export interface WatchUserChangesRequest {
  page_token: string;
}

/** One message of the stream: `event` or `heartbeat`, and the token after it. */
export interface WatchUserChangesResponse {
  event?: UserChangeEventMessage;
  heartbeat?: { time: string };
  page_token: string;
}

function toMessage(change: UserChange): UserChangeEventMessage {
  const event = UserChangeEventDto.from(change);
  return {
    id: event.id,
    source: event.source,
    spec_version: event.specversion,
    type: event.type,
    subject: event.subject,
    time: event.time,
    sequence: event.sequence,
    data_content_type: event.datacontenttype,
    data: event.data,
  };
}

/**
 * `users.Users/ListUserChanges` and `WatchUserChanges`: the change feed over gRPC, through the
 * same ChangesService as `GET /users/changes`.
 */
@Controller()
@UseFilters(GrpcExceptionsFilter)
export class ChangesGrpcController {
  private readonly listCalls: ObservedGrpcMethod;
  private readonly watchCalls: ObservedGrpcMethod;

  constructor(
    private readonly changes: ChangesService,
    observability: GrpcObservability,
  ) {
    this.listCalls = observability.method('users.Users', 'ListUserChanges');
    this.watchCalls = observability.method('users.Users', 'WatchUserChanges');
  }

  @GrpcMethod('Users', 'ListUserChanges')
  @RequiredScope('users:read')
  listUserChanges(
    request: ListUserChangesRequest,
    metadata: Metadata,
    call: ListCall,
  ): Promise<ListUserChangesResponse> {
    return this.listCalls.run(metadata, call, async () => {
      const { token, size, waitMs } = pageRequest(request);
      const page = await this.changes.page(token, size, waitMs, cancelled(call));
      return { events: page.events.map(toMessage), next_page_token: page.next };
    });
  }

  @GrpcMethod('Users', 'WatchUserChanges')
  @RequiredScope('users:read')
  watchUserChanges(
    request: WatchUserChangesRequest,
    metadata: Metadata,
    call: ServerWritableStream<WatchUserChangesRequest, WatchUserChangesResponse>,
  ): Observable<WatchUserChangesResponse> {
    return new Observable((subscriber) => {
      // Nest unsubscribes when the client cancels; the loop then stops at its next step.
      const stop = new AbortController();
      const stream = async () => {
        try {
          for await (const item of this.changes.watch(
            request.page_token || undefined,
            stop.signal,
          )) {
            if (item.heartbeat) {
              const heartbeat = { time: new Date().toISOString() };
              subscriber.next({ heartbeat, page_token: item.next });
            }
            for (const change of item.events) {
              const token = this.changes.tokenAfter(change);
              subscriber.next({ event: toMessage(change), page_token: token });
            }
            // Nest holds what the call cannot take yet (ServerGrpc.writeObservableToGrpc, checked
            // at boot: src/internals/nest-grpc.ts): read the next page once the call drained.
            if (call.writableNeedDrain) await once(call, 'drain', { signal: stop.signal });
          }
        } catch (error) {
          if (!stop.signal.aborted) throw error;
        }
        if (stop.signal.aborted) {
          throw new RpcException({ code: status.CANCELLED, message: 'call cancelled' });
        }
        // The feed never ends; the stream does when this instance drains for shutdown.
        throw new RpcException({
          code: status.UNAVAILABLE,
          message: 'the service is shutting down: resume from the last page_token',
        });
      };
      this.watchCalls.run(metadata, call, stream).then(
        () => subscriber.complete(),
        (error: unknown) => subscriber.error(error),
      );
      return () => stop.abort();
    });
  }
}

type ListCall = ServerUnaryCall<ListUserChangesRequest, ListUserChangesResponse>;

/** A ListUserChangesRequest checked: proto3 sends 0 for an unset size, meaning the default. */
function pageRequest({ page_token, page_size, wait_seconds }: ListUserChangesRequest) {
  const size = page_size || DEFAULT_CHANGES_LIMIT;
  if (!(size >= 1 && size <= MAX_CHANGES_LIMIT)) {
    throw new InvalidArgumentError(`page_size must be between 0 and ${MAX_CHANGES_LIMIT}`);
  }
  if (!(wait_seconds >= 0 && wait_seconds <= MAX_WAIT_S)) {
    throw new InvalidArgumentError(`wait_seconds must be between 0 and ${MAX_WAIT_S}`);
  }
  return { token: page_token || undefined, size, waitMs: wait_seconds * 1000 };
}

/** An AbortSignal for a gRPC call the client cancelled (or whose deadline passed). */
function cancelled(call: {
  cancelled: boolean;
  once(event: 'cancelled', listener: () => void): unknown;
}): AbortSignal {
  const controller = new AbortController();
  if (call.cancelled) controller.abort();
  else call.once('cancelled', () => controller.abort());
  return controller.signal;
}
