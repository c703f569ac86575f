import {
  BadRequestException,
  HttpException,
  NotFoundException,
  PayloadTooLargeException,
  ServiceUnavailableException,
} from '@nestjs/common';
import { QueryFailedError } from 'typeorm';
import { toHttpError } from './all-exceptions.filter.js';
import { ConflictError, InvalidArgumentError, NotFoundError } from '../common/errors.js';

const pgError = (code: string, message = 'boom') => Object.assign(new Error(message), { code });

describe(toHttpError.name, () => {
  it('keeps an HttpException status and message', () => {
    expect(toHttpError(new BadRequestException('id must be a positive 32-bit integer'))).toEqual({
      status: 400,
      body: { error: 'id must be a positive 32-bit integer' },
    });
  });

  it('turns ValidationPipe message arrays into one sentence plus details', () => {
    const exception = new BadRequestException([
      'name must be a string',
      'property x should not exist',
    ]);
    expect(toHttpError(exception)).toEqual({
      status: 400,
      body: {
        error: 'invalid request: name must be a string; property x should not exist',
        details: ['name must be a string', 'property x should not exist'],
      },
    });
  });

  it('never uses the status text as the error', () => {
    expect(toHttpError(new BadRequestException()).body.error).not.toBe('Bad Request');
    expect(toHttpError(new BadRequestException()).body.error).toEqual(expect.any(String));
  });

  it('rewrites Nest route-not-found without echoing the query string', () => {
    expect(
      toHttpError(new NotFoundException('Cannot GET /x?token=1'), { method: 'GET', path: '/x' }),
    ).toEqual({
      status: 404,
      body: { error: 'no route for GET /x' },
    });
  });

  it('hides the messages of body-parser errors', () => {
    const parse = new BadRequestException('Unexpected token } in JSON at position 3', {
      cause: Object.assign(new SyntaxError('x'), { type: 'entity.parse.failed' }),
    });
    expect(toHttpError(parse).body).toEqual({ error: 'request body is not valid JSON' });
    const tooLarge = new PayloadTooLargeException('request entity too large', {
      cause: { type: 'entity.too.large', limit: 102400 },
    });
    expect(toHttpError(tooLarge)).toEqual({
      status: 413,
      body: { error: 'request body is larger than the limit of 102400 bytes' },
    });
  });

  it('maps service errors', () => {
    expect(toHttpError(new NotFoundError('user 4 not found'))).toEqual({
      status: 404,
      body: { error: 'user 4 not found' },
    });
    expect(toHttpError(new ConflictError('taken')).status).toBe(409);
    expect(toHttpError(new InvalidArgumentError('bad')).status).toBe(400);
  });

  it.each([['ECONNREFUSED'], ['57P01'], ['08006'], ['53300'], ['57014']])(
    'answers 503 service unavailable when the database is unreachable (%s)',
    (code) => {
      expect(toHttpError(pgError(code))).toEqual({
        status: 503,
        body: { error: 'service unavailable' },
      });
    },
  );

  it('answers 503 for a pool connect timeout', () => {
    expect(toHttpError(new Error('timeout exceeded when trying to connect')).status).toBe(503);
  });

  it('answers 500 without internals for anything else', () => {
    const query = new QueryFailedError(
      'SELECT secret FROM t',
      [],
      pgError('42P01', 'relation "t" does not exist'),
    );
    expect(toHttpError(query)).toEqual({ status: 500, body: { error: 'internal server error' } });
    expect(toHttpError(new TypeError('x is undefined at /app/src/y.ts'))).toEqual({
      status: 500,
      body: { error: 'internal server error' },
    });
    expect(toHttpError('a string')).toEqual({
      status: 500,
      body: { error: 'internal server error' },
    });
  });

  it('does not pass on the message of a 5xx HttpException', () => {
    expect(toHttpError(new HttpException('db password wrong', 500)).body).toEqual({
      error: 'internal server error',
    });
    expect(toHttpError(new ServiceUnavailableException('pool')).body).toEqual({
      error: 'service unavailable',
    });
  });
});
