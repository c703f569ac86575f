import {
  BadRequestException,
  Body,
  Controller,
  Get,
  HttpCode,
  Post,
  Req,
  UseGuards,
} from '@nestjs/common';
import type { Request } from 'express';
import { ApiKeyGuard } from './api-key.guard.js';

const REDACTED_HEADERS = new Set(['authorization', 'proxy-authorization', 'cookie', 'x-api-key']);

export function redactHeaders(headers: Request['headers']): Record<string, string | string[]> {
  const result: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    result[name] = REDACTED_HEADERS.has(name) ? '[redacted]' : value;
  }
  return result;
}

@Controller()
export class UtilityController {
  /** Any JSON value comes back as sent; the body is typed unknown so no DTO validation applies. */
  @Post('echo')
  @HttpCode(200)
  echo(@Body() body: unknown): { youSent: unknown } {
    if (body === undefined) throw new BadRequestException('request body must be a JSON value');
    return { youSent: body };
  }

  @Get('info')
  info(@Req() request: Request): {
    method: string;
    path: string;
    headers: Record<string, string | string[]>;
  } {
    return { method: request.method, path: request.path, headers: redactHeaders(request.headers) };
  }

  @Get('private')
  @UseGuards(ApiKeyGuard)
  secret(): { secretData: number } {
    return { secretData: 42 };
  }
}
