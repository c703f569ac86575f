import {
  CORE_GROUP,
  CORE_USER,
  ENTERPRISE_USER,
  GROUP_SCHEMA,
  MAX_RESULTS,
  type ScimAttribute,
  type ScimSchema,
  USER_SCHEMAS,
} from './scim-schema.js';

const SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:Schema';
const RESOURCE_TYPE = 'urn:ietf:params:scim:schemas:core:2.0:ResourceType';
const SERVICE_PROVIDER_CONFIG = 'urn:ietf:params:scim:schemas:core:2.0:ServiceProviderConfig';
const BASE = '/scim/v2';

/** An attribute as /Schemas shows it: every characteristic with its RFC 7643 default filled in. */
function described(attribute: ScimAttribute): Record<string, unknown> {
  const { subAttributes, ...declared } = attribute;
  delete declared.maxLength;
  return {
    ...declared,
    multiValued: attribute.multiValued ?? false,
    required: attribute.required ?? false,
    caseExact: attribute.caseExact ?? false,
    mutability: attribute.mutability ?? 'readWrite',
    returned: attribute.returned ?? 'default',
    uniqueness: attribute.uniqueness ?? 'none',
    ...(subAttributes ? { subAttributes: subAttributes.map(described) } : {}),
  };
}

function schemaResource(schema: ScimSchema) {
  return {
    schemas: [SCHEMA],
    id: schema.id,
    name: schema.name,
    description: schema.description,
    attributes: schema.attributes.map(described),
    meta: { resourceType: 'Schema', location: `${BASE}/Schemas/${schema.id}` },
  };
}

const USER_RESOURCE_TYPE = {
  schemas: [RESOURCE_TYPE],
  id: 'User',
  name: 'User',
  endpoint: '/Users',
  description: 'User Account',
  schema: CORE_USER,
  schemaExtensions: [{ schema: ENTERPRISE_USER, required: false }],
  meta: { resourceType: 'ResourceType', location: `${BASE}/ResourceTypes/User` },
};

const GROUP_RESOURCE_TYPE = {
  schemas: [RESOURCE_TYPE],
  id: 'Group',
  name: 'Group',
  endpoint: '/Groups',
  description: 'Group',
  schema: CORE_GROUP,
  schemaExtensions: [],
  meta: { resourceType: 'ResourceType', location: `${BASE}/ResourceTypes/Group` },
};

/** What the service supports, generated from the schema above; nothing here is aspirational. */
export const DISCOVERY = {
  serviceProviderConfig: {
    schemas: [SERVICE_PROVIDER_CONFIG],
    patch: { supported: true },
    bulk: { supported: false, maxOperations: 0, maxPayloadSize: 0 },
    filter: { supported: true, maxResults: MAX_RESULTS },
    changePassword: { supported: false },
    sort: { supported: true },
    etag: { supported: true },
    authenticationSchemes: [
      {
        type: 'oauthbearertoken',
        name: 'OAuth Bearer Token',
        description:
          'A JWT carrying the scope scim, or a static provider token whose SHA-256 the service lists',
        primary: true,
      },
    ],
    meta: { resourceType: 'ServiceProviderConfig', location: `${BASE}/ServiceProviderConfig` },
  },
  resourceTypes: [USER_RESOURCE_TYPE, GROUP_RESOURCE_TYPE],
  schemas: [...USER_SCHEMAS, GROUP_SCHEMA].map(schemaResource),
};
