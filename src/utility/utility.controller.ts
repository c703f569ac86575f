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
import {
  ApiBody,
  ApiHeader,
  ApiOkResponse,
  ApiOperation,
  ApiProperty,
  ApiSecurity,
  ApiTags,
} from '@nestjs/swagger';
import type { Request } from 'express';
import { Authenticated } from '../auth/auth.decorators.js';
import { ApiErrors } from '../http/openapi.decorators.js';
import { API_KEY_SECURITY } from '../http/openapi.js';
import { ApiKeyGuard } from './api-key.guard.js';

/**
 * Credentials a client, a gateway or a mesh can put in headers: HTTP auth and cookies, API keys,
 * the client certificate Envoy/Istio forward (x-forwarded-client-cert), the tokens of common
 * gateways and identity proxies, and anything else named like a token, secret or key.
 */
const REDACTED_HEADERS = new Set([
  'authorization',
  'proxy-authorization',
  'cookie',
  'set-cookie',
  'x-api-key',
  'x-forwarded-client-cert',
  'x-client-cert',
  'ssl-client-cert',
  'x-ssl-client-cert',
  'x-amzn-oidc-data',
  'x-amzn-oidc-accesstoken',
  'x-goog-iap-jwt-assertion',
  'cf-access-jwt-assertion',
  'x-ms-token-aad-id-token',
  'x-ms-token-aad-access-token',
  'x-forwarded-access-token',
  'x-auth-request-access-token',
]);
const CREDENTIAL_NAME = /token|secret|passw|api[-_]?key|credential|session|jwt|signature/i;

function isCredentialHeader(name: string): boolean {
  return REDACTED_HEADERS.has(name) || CREDENTIAL_NAME.test(name);
}

function redactHeaders(headers: Request['headers']): Record<string, string | string[]> {
  const result: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    result[name] = isCredentialHeader(name) ? '[redacted]' : value;
  }
  return result;
}

/**
 * Any JSON value. OpenAPI 3.0 has no `any` or `null` type, and `@ApiProperty()` on `unknown` says
 * object; `nullable` may only sit beside a `type`, so null rides on the object branch (on one
 * branch only, or null would match several and fail `oneOf`).
 */
const ANY_JSON_VALUE = {
  oneOf: [
    { type: 'object', additionalProperties: true, nullable: true },
    { type: 'array', items: {} },
    { type: 'string' },
    { type: 'number' },
    { type: 'boolean' },
  ],
};

class EchoDto {
  @ApiProperty({
    description: 'the parsed request body: any JSON value',
    ...ANY_JSON_VALUE,
    example: { hello: 'world' },
  })
  youSent: unknown;
}

class InfoDto {
  @ApiProperty({ example: 'GET' })
  method: string;

  @ApiProperty({ example: '/info', description: 'without the query string' })
  path: string;

  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    description:
      'request headers; credentials (authorization, cookie, x-api-key, x-forwarded-client-cert, gateway tokens, any header named like a token, secret or key) are "[redacted]"',
  })
  headers: Record<string, string | string[]>;
}

class SecretDto {
  @ApiProperty({ example: 42 })
  secretData: number;
}

@ApiTags('utility')
@Controller()
export class UtilityController {
  /** Any JSON value comes back as sent; the body is typed unknown so no DTO validation applies. */
  @Post('echo')
  @Authenticated()
  @ApiOperation({ summary: 'Echo the JSON body back' })
  @ApiBody({ description: 'any JSON value', schema: ANY_JSON_VALUE })
  @ApiOkResponse({ type: EchoDto })
  @ApiErrors(400, 413, 415)
  @HttpCode(200)
  echo(@Body() body: unknown): { youSent: unknown } {
    if (body === undefined) throw new BadRequestException('request body must be a JSON value');
    return { youSent: body };
  }

  @Get('info')
  @Authenticated()
  @ApiOperation({ summary: 'Describe the request as the service received it' })
  @ApiOkResponse({ type: InfoDto })
  info(@Req() request: Request): {
    method: string;
    path: string;
    headers: Record<string, string | string[]>;
  } {
    return { method: request.method, path: request.path, headers: redactHeaders(request.headers) };
  }

  @Get('private')
  @ApiOperation({ summary: 'Read secret data with an API key' })
  @ApiSecurity(API_KEY_SECURITY)
  @ApiHeader({ name: 'x-api-key', required: true, description: 'one of API_KEYS' })
  @ApiOkResponse({ type: SecretDto })
  @ApiErrors(401)
  @UseGuards(ApiKeyGuard)
  secret(): { secretData: number } {
    return { secretData: 42 };
  }
}
