import { status } from '@grpc/grpc-js';
import {
  AuthenticationError,
  InsufficientScopeError,
  KeysUnavailableError,
  refusalOf,
} from './auth-errors.js';

describe(refusalOf.name, () => {
  it('answers each refusal the same way on both transports', () => {
    expect(refusalOf(new AuthenticationError('missing', false))).toEqual({
      reason: 'missing',
      message: 'a bearer token is required: send Authorization: Bearer <token>',
      httpStatus: 401,
      grpcCode: status.UNAUTHENTICATED,
      challenge: 'Bearer realm="users"',
    });
    expect(refusalOf(new AuthenticationError('expired'))).toMatchObject({
      httpStatus: 401,
      grpcCode: status.UNAUTHENTICATED,
      challenge: 'Bearer realm="users", error="invalid_token"',
    });
    expect(refusalOf(new InsufficientScopeError('users:write'))).toMatchObject({
      reason: 'insufficient_scope',
      httpStatus: 403,
      grpcCode: status.PERMISSION_DENIED,
      challenge: 'Bearer error="insufficient_scope", scope="users:write"',
    });
    expect(refusalOf(new KeysUnavailableError())).toEqual({
      reason: 'keys_unavailable',
      message: 'the token signing keys are not available yet',
      httpStatus: 503,
      grpcCode: status.UNAVAILABLE,
    });
  });

  it('is undefined for anything that is not a refusal', () => {
    expect(refusalOf(new Error('boom'))).toBeUndefined();
    expect(refusalOf(undefined)).toBeUndefined();
  });
});
