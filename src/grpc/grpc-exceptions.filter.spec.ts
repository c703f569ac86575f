import { BadRequestException, HttpException } from '@nestjs/common';
import { status } from '@grpc/grpc-js';
import { toGrpcError } from './grpc-exceptions.filter.js';
import { ConflictError, InvalidArgumentError, NotFoundError } from '../common/errors.js';

describe(toGrpcError.name, () => {
  it('maps service errors to their gRPC codes', () => {
    expect(toGrpcError(new NotFoundError('user 42 not found'))).toEqual({
      code: status.NOT_FOUND,
      message: 'user 42 not found',
    });
    expect(toGrpcError(new InvalidArgumentError('bad id')).code).toBe(status.INVALID_ARGUMENT);
    expect(toGrpcError(new ConflictError('taken')).code).toBe(status.ALREADY_EXISTS);
  });

  it('maps an unreachable database to UNAVAILABLE', () => {
    expect(
      toGrpcError(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' })),
    ).toEqual({
      code: status.UNAVAILABLE,
      message: 'service unavailable',
    });
  });

  it('never lets an HttpException reach a client as UNKNOWN', () => {
    expect(toGrpcError(new BadRequestException('x')).code).toBe(status.INVALID_ARGUMENT);
    expect(toGrpcError(new HttpException('secret detail', 500))).toEqual({
      code: status.INTERNAL,
      message: 'internal error',
    });
  });

  it('hides the message of unexpected errors', () => {
    expect(toGrpcError(new Error('relation "users" does not exist'))).toEqual({
      code: status.INTERNAL,
      message: 'internal error',
    });
  });
});
