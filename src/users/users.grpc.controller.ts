import { Controller, UseFilters, UseInterceptors } from '@nestjs/common';
import { GrpcMethod, RpcException } from '@nestjs/microservices';
import { type Metadata, type ServerUnaryCall, status } from '@grpc/grpc-js';
import { RequiredScope } from '../auth/auth.decorators.js';
import { GrpcExceptionsFilter } from '../grpc/grpc-exceptions.filter.js';
import { InvalidArgumentError } from '../common/errors.js';
import { GrpcObservabilityInterceptor } from '../grpc/grpc-observability.interceptor.js';
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

/** Serves `users.Users` over gRPC through the same UsersService (and repository) as HTTP. */
@Controller()
@UseFilters(GrpcExceptionsFilter)
@UseInterceptors(GrpcObservabilityInterceptor)
export class UsersGrpcController {
  constructor(private readonly usersService: UsersService) {}

  @GrpcMethod('Users', 'GetUser')
  @RequiredScope('users:read')
  async getUser(
    request: GetUserRequest,
    _metadata: Metadata,
    call: ServerUnaryCall<GetUserRequest, UserReply>,
  ): Promise<UserReply> {
    // proto3 sends 0 for a missing id; int32 cannot exceed the HTTP id range.
    if (!(request.id > 0)) throw new InvalidArgumentError('id must be a positive 32-bit integer');
    // The caller gave up (deadline or cancel): skip the query, nobody will read the answer.
    if (call.cancelled)
      throw new RpcException({ code: status.CANCELLED, message: 'call cancelled' });
    const user = await this.usersService.findOne(request.id);
    return { id: user.id, name: user.name };
  }
}
