import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import type { Response } from 'express';

/**
 * A handler parameter: an AbortSignal that aborts when the client goes away before its answer
 * is sent (it closed the connection), so work done only for that answer (a long poll's wait) can
 * stop. The handler stays free of Express: services take the signal.
 */
export const ClientGone = createParamDecorator((_: unknown, context: ExecutionContext) => {
  const response = context.switchToHttp().getResponse<Response>();
  const controller = new AbortController();
  // 'close' also follows a response that was sent in full: only an unfinished one is a client gone.
  response.once('close', () => {
    if (!response.writableFinished) controller.abort();
  });
  return controller.signal;
});
