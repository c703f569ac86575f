import { Get, Param, SetMetadata } from '@nestjs/common';
import { PATH_METADATA, ROUTE_ARGS_METADATA } from '@nestjs/common/constants.js';
import { RouteParamtypes } from '@nestjs/common/enums/route-paramtypes.enum.js';
import type { Request, Response } from 'express';
import { AfterHandler } from './after-handler.js';

const seen: unknown[] = [];

class Things {
  @Get(':id')
  @AfterHandler((result, request, response) => {
    seen.push(request, response);
    return { wrapped: result };
  })
  @SetMetadata('declared-below', 'kept')
  find(@Param('id') id: string): Promise<{ id: string }> {
    return Promise.resolve({ id });
  }
}

describe(AfterHandler.name, () => {
  const handler = Things.prototype.find;

  it('gets the request as one more argument after the handler’s own', () => {
    const args = Reflect.getMetadata(ROUTE_ARGS_METADATA, Things, 'find') as Record<
      string,
      { index: number }
    >;
    expect(
      Object.entries(args).map(([key, { index }]) => [Number(key.split(':')[0]), index]),
    ).toEqual(
      expect.arrayContaining([
        [RouteParamtypes.PARAM, 0],
        [RouteParamtypes.REQUEST, 1],
      ]),
    );
  });

  it('keeps the handler’s name and the metadata of decorators on either side', () => {
    expect(handler.name).toBe('find');
    expect(Reflect.getMetadata('declared-below', handler)).toBe('kept');
    expect(Reflect.getMetadata(PATH_METADATA, handler)).toBe(':id');
  });

  it('runs the step on what the handler returns, with the request and its response', async () => {
    const response = {} as Response;
    const request = { res: response } as Request;
    const find = handler as unknown as (id: string, request: Request) => Promise<unknown>;
    expect(await find.call(new Things(), '7', request)).toEqual({ wrapped: { id: '7' } });
    expect(seen).toEqual([request, response]);
  });

  it('is the handler alone when called without a request (a unit test, another provider)', async () => {
    seen.length = 0;
    const find = handler as unknown as (id: string) => Promise<unknown>;
    expect(await find.call(new Things(), '8')).toEqual({ id: '8' });
    expect(seen).toEqual([]);
  });
});
