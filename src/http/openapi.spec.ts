import type { OpenAPIObject } from '@nestjs/swagger';
import { applyContractRules } from './openapi.js';

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
