import { Controller, UseFilters } from '@nestjs/common';
import { RpcException } from '@nestjs/microservices';
import { type Metadata, type ServerUnaryCall, status } from '@grpc/grpc-js';
import { RequiredScope } from '../auth/auth.decorators.js';
import { DirectGrpcMethod } from '../grpc/direct-grpc-methods.js';
import { GrpcExceptionsFilter } from '../grpc/grpc-exceptions.filter.js';
import { InvalidArgumentError } from '../common/errors.js';
import { GrpcObservability, type ObservedGrpcMethod } from '../grpc/grpc-observability.js';
import { UsersService } from './users.service.js';

/** proto/users.proto `GetUserRequest`. */
export interface GetUserRequest {
  id: number;
}

/** proto/users.proto `User`: no email, by contract. */
export interface UserReply {
  id: number;
  name: string;
}

/**
 * Serves `users.Users` over gRPC through the same UsersService (and repository) as HTTP. Each
 * method runs its work in its ObservedGrpcMethod: one log line and metric sample per call.
 */
@Controller()
@UseFilters(GrpcExceptionsFilter)
export class UsersGrpcController {
  private readonly getUserCalls: ObservedGrpcMethod;

  constructor(
    private readonly usersService: UsersService,
    observability: GrpcObservability,
  ) {
    this.getUserCalls = observability.method('users.Users', 'GetUser');
  }

  @DirectGrpcMethod('Users', 'GetUser')
  @RequiredScope('users:read')
  getUser(
    request: GetUserRequest,
    metadata: Metadata,
    call: ServerUnaryCall<GetUserRequest, UserReply>,
  ): Promise<UserReply> {
    return this.getUserCalls.run(metadata, call, async () => {
      // proto3 sends 0 for a missing id; int32 cannot exceed the HTTP id range.
      if (!(request.id > 0)) throw new InvalidArgumentError('id must be a positive 32-bit integer');
      // The caller gave up (deadline or cancel): skip the query, nobody will read the answer.
      if (call.cancelled)
        throw new RpcException({ code: status.CANCELLED, message: 'call cancelled' });
      return this.usersService.findSummary(request.id);
    });
  }
}
