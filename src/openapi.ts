import type { INestApplication } from '@nestjs/common';
import { DocumentBuilder, type OpenAPIObject, SwaggerModule } from '@nestjs/swagger';

export const API_KEY_SECURITY = 'api-key';

/** The OpenAPI 3 document, generated from the controllers and DTOs. */
export function createOpenApiDocument(app: INestApplication): OpenAPIObject {
  const config = new DocumentBuilder()
    .setTitle('users-service')
    .setDescription(
      'Users and their posts. Every error is `{"error": string}` (validation errors add `details`). ' +
        'Every response carries `x-request-id`. The gRPC contract is proto/users.proto.',
    )
    .setVersion('1.0.0')
    .addApiKey({ type: 'apiKey', name: 'x-api-key', in: 'header' }, API_KEY_SECURITY)
    .build();
  return SwaggerModule.createDocument(app, config);
}

/** Serves the document at /docs-json and the Swagger UI at /docs. */
export function setupOpenApi(app: INestApplication): void {
  SwaggerModule.setup('docs', app, () => createOpenApiDocument(app), {
    jsonDocumentUrl: 'docs-json',
    yamlDocumentUrl: 'docs-yaml',
  });
}
