import type { INestApplication } from '@nestjs/common';
import { DocumentBuilder, type OpenAPIObject, SwaggerModule } from '@nestjs/swagger';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { projectRoot } from '../project-root.js';
import { REQUEST_ID_HEADER } from './openapi.decorators.js';

export const API_KEY_SECURITY = 'api-key';
/** The bearer (JWT) scheme of the document; src/auth's decorators put it on each operation. */
export const BEARER_SECURITY = 'bearer';

const OPERATION_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch'] as const;

/** The OpenAPI 3 document, generated from the controllers and DTOs. */
function createOpenApiDocument(app: INestApplication): OpenAPIObject {
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
  const document = applyContractRules(SwaggerModule.createDocument(app, config));
  return addStaticFiles(document, staticFiles(path.join(projectRoot(), 'public')));
}

/**
 * Adds to the generated document what docs/api.md says of every route, which Nest's decorators
 * can only say route by route:
 * - every response carries `x-request-id`;
 * - an operation without `@ApiSecurity` is public: `security: []` says so explicitly, rather than
 *   leaving clients to guess whether a global requirement applies;
 * - PATCH accepts `application/merge-patch+json` as well as JSON (RFC 7396), with the same schema;
 * - a request body validated against a DTO class refuses every field the class does not declare
 *   (the global ValidationPipe's forbidNonWhitelisted), the service-assigned ones included:
 *   `additionalProperties: false` on each schema a request body references.
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
      if (!body || '$ref' in body) continue;
      for (const media of Object.values(body.content)) {
        const ref = media.schema && '$ref' in media.schema ? media.schema.$ref : undefined;
        const schema = ref && components.schemas?.[ref.replace('#/components/schemas/', '')];
        if (schema && !('$ref' in schema)) schema.additionalProperties = false;
      }
      if (method === 'patch' && body.content['application/json']) {
        body.content['application/merge-patch+json'] ??= body.content['application/json'];
      }
    }
  }
  return document;
}

/** Content types of the files public/ may hold; anything else is served as bytes. */
const STATIC_TYPES: Record<string, string> = {
  '.png': 'image/png',
  '.svg': 'image/svg+xml',
  '.ico': 'image/x-icon',
  '.txt': 'text/plain; charset=utf-8',
};

/** The URL paths of the files under `dir` that the static middleware serves (no dot-files). */
export function staticFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => path.relative(dir, path.join(entry.parentPath, entry.name)))
    .filter((file) => !file.split(path.sep).some((part) => part.startsWith('.')))
    .map((file) => `/${file.split(path.sep).join('/')}`)
    .sort();
}

/**
 * Documents the files served from public/ at the root path, as ServeStaticModule serves them
 * (src/app.module.ts): a GET with ETag, Last-Modified and Cache-Control, 304 for a matching
 * If-None-Match, and the JSON 404 of any unknown path.
 */
export function addStaticFiles(document: OpenAPIObject, files: string[]): OpenAPIObject {
  const requestId = { $ref: `#/components/headers/${REQUEST_ID_HEADER.name}` };
  const headers = {
    ETag: { description: 'entity tag of the file', schema: { type: 'string' } },
    'Last-Modified': { description: 'when the file last changed', schema: { type: 'string' } },
    'Cache-Control': { description: 'public, max-age=3600', schema: { type: 'string' } },
    [REQUEST_ID_HEADER.name]: requestId,
  };
  for (const file of files) {
    const type = STATIC_TYPES[path.extname(file).toLowerCase()] ?? 'application/octet-stream';
    document.paths[file] = {
      get: {
        operationId: `static:${file}`,
        summary: `The static file ${file} (public${file})`,
        tags: ['static files'],
        security: [],
        parameters: [
          {
            name: 'If-None-Match',
            in: 'header',
            required: false,
            description: 'the ETag of a cached copy: 304 without a body when it still matches',
            schema: { type: 'string' },
          },
        ],
        responses: {
          '200': {
            description: `the file, as ${type}`,
            headers,
            content: { [type]: { schema: { type: 'string', format: 'binary' } } },
          },
          '304': { description: 'Not modified: If-None-Match matched', headers },
          '404': {
            description: 'No such file (the JSON 404 of any unknown path)',
            headers: { [REQUEST_ID_HEADER.name]: requestId },
            content: {
              'application/json': { schema: { $ref: '#/components/schemas/ErrorBodyDto' } },
            },
          },
        },
      },
    };
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
