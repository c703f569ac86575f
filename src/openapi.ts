import type { INestApplication } from '@nestjs/common';
import { DocumentBuilder, type OpenAPIObject, SwaggerModule } from '@nestjs/swagger';
import { BEARER_SECURITY } from './auth/auth.decorators.js';
import { REQUEST_ID_HEADER } from './common/openapi.decorators.js';

export const API_KEY_SECURITY = 'api-key';

const OPERATION_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch'] as const;

/** The OpenAPI 3 document, generated from the controllers and DTOs. */
export function createOpenApiDocument(app: INestApplication): OpenAPIObject {
  const config = new DocumentBuilder()
    .setTitle('users-service')
    .setDescription(
      'Users and their posts. Every error is `{"error": string}` (validation errors add `details`). ' +
        'Every response carries `x-request-id`. The gRPC contract is proto/users.proto.',
    )
    .setVersion('1.0.0')
    // Relative: the document describes whichever host serves it (a pod, a gateway, localhost).
    .addServer('/', 'the host serving this document')
    .addApiKey({ type: 'apiKey', name: 'x-api-key', in: 'header' }, API_KEY_SECURITY)
    // Required only with authentication on (AUTH_MODE=jwt); each operation names its scope in
    // `x-required-scopes` (an http scheme carries no scopes in OpenAPI 3.0).
    .addBearerAuth(
      {
        type: 'http',
        scheme: 'bearer',
        bearerFormat: 'JWT',
        description:
          'A JWT from the identity provider (AUTH_ISSUER, audience AUTH_AUDIENCE), with the scope `users:read` or `users:write` in `scope` or `scp`. See docs/authentication.md.',
      },
      BEARER_SECURITY,
    )
    .build();
  // As in package.json: proprietary. DocumentBuilder.setLicense would add an empty `url`.
  config.info.license = { name: 'UNLICENSED' };
  return applyContractRules(SwaggerModule.createDocument(app, config));
}

/**
 * Adds to the generated document what the contract says of every route, which Nest's decorators
 * can only say route by route:
 * - every response carries `x-request-id`;
 * - an operation without `@ApiSecurity` is public: `security: []` says so explicitly, rather than
 *   leaving clients to guess whether a global requirement applies;
 * - PATCH accepts `application/merge-patch+json` as well as JSON (RFC 7396), with the same schema.
 */
export function applyContractRules(document: OpenAPIObject): OpenAPIObject {
  const components = (document.components ??= {});
  components.headers = {
    ...components.headers,
    [REQUEST_ID_HEADER.name]: REQUEST_ID_HEADER.header,
  };
  const requestIdRef = { $ref: `#/components/headers/${REQUEST_ID_HEADER.name}` };
  for (const pathItem of Object.values(document.paths)) {
    for (const method of OPERATION_METHODS) {
      const operation = pathItem[method];
      if (!operation) continue;
      operation.security ??= [];
      for (const response of Object.values(operation.responses)) {
        if (!response || '$ref' in response) continue;
        response.headers = { ...response.headers, [REQUEST_ID_HEADER.name]: requestIdRef };
      }
      const body = operation.requestBody;
      if (method === 'patch' && body && !('$ref' in body) && body.content['application/json']) {
        body.content['application/merge-patch+json'] ??= body.content['application/json'];
      }
    }
  }
  return document;
}

/** Serves the document at /docs-json and the Swagger UI at /docs. */
export function setupOpenApi(app: INestApplication): void {
  SwaggerModule.setup('docs', app, () => createOpenApiDocument(app), {
    jsonDocumentUrl: 'docs-json',
    yamlDocumentUrl: 'docs-yaml',
  });
}
