import type { OpenAPIObject } from '@nestjs/swagger';
import path from 'node:path';
import { addStaticFiles, applyContractRules, staticFiles } from './openapi.js';
import { projectRoot } from '../project-root.js';

const json = { schema: { $ref: '#/components/schemas/UpdateUserDto' } };

function documentWith(paths: OpenAPIObject['paths']): OpenAPIObject {
  return { openapi: '3.0.0', info: { title: 't', version: '1' }, paths };
}

describe(applyContractRules.name, () => {
  it('declares x-request-id once and references it from every response', () => {
    const document = applyContractRules(
      documentWith({
        '/users': {
          get: { responses: { '200': { description: 'ok' }, '500': { description: 'failed' } } },
        },
      }),
    );
    expect(document.components?.headers?.['x-request-id']).toEqual(
      expect.objectContaining({ schema: expect.objectContaining({ type: 'string' }) }),
    );
    for (const response of Object.values(document.paths['/users'].get!.responses)) {
      expect(response).toEqual(
        expect.objectContaining({
          headers: { 'x-request-id': { $ref: '#/components/headers/x-request-id' } },
        }),
      );
    }
  });

  it('marks operations without a security requirement public, and keeps the others', () => {
    const document = applyContractRules(
      documentWith({
        '/echo': { post: { responses: {} } },
        '/private': { get: { security: [{ 'api-key': [] }], responses: {} } },
      }),
    );
    expect(document.paths['/echo'].post!.security).toEqual([]);
    expect(document.paths['/private'].get!.security).toEqual([{ 'api-key': [] }]);
  });

  it('accepts application/merge-patch+json on PATCH only, with the JSON schema', () => {
    const document = applyContractRules(
      documentWith({
        '/users/{id}': {
          patch: { requestBody: { content: { 'application/json': json } }, responses: {} },
          put: { requestBody: { content: { 'application/json': json } }, responses: {} },
        },
      }),
    );
    const content = (operation: 'patch' | 'put') =>
      (document.paths['/users/{id}'][operation]!.requestBody as { content: object }).content;
    expect(content('patch')).toEqual({
      'application/json': json,
      'application/merge-patch+json': json,
    });
    expect(content('put')).toEqual({ 'application/json': json });
  });
});

describe(addStaticFiles.name, () => {
  it('documents each file of public/ as a public GET with its content type, 304 and 404', () => {
    expect(staticFiles(path.join(projectRoot(), 'public'))).toContain('/logo.png');
    const document = addStaticFiles(documentWith({}), ['/logo.png', '/notes.bin']);
    const logo = document.paths['/logo.png'].get!;
    expect(logo.security).toEqual([]);
    expect(Object.keys(logo.responses).sort()).toEqual(['200', '304', '404']);
    expect(Object.keys((logo.responses['200'] as { content: object }).content)).toEqual([
      'image/png',
    ]);
    expect(
      Object.keys(
        (document.paths['/notes.bin'].get!.responses['200'] as { content: object }).content,
      ),
    ).toEqual(['application/octet-stream']);
  });
});

describe('request bodies', () => {
  it('refuse undeclared fields: additionalProperties false on each schema a body references', () => {
    const document = applyContractRules({
      ...documentWith({
        '/users': {
          post: {
            requestBody: {
              content: { 'application/json': { schema: { $ref: '#/components/schemas/A' } } },
            },
            responses: {},
          },
        },
      }),
      components: { schemas: { A: { type: 'object' }, Response: { type: 'object' } } },
    });
    expect(document.components?.schemas).toEqual({
      A: { type: 'object', additionalProperties: false },
      Response: { type: 'object' },
    });
  });
});
