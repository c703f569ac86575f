// The SCIM specs' requests: SCIM's media type on every body, and the resources they send.
import { t } from './users-api.js';

export const SCIM = '/scim/v2';
export const SCIM_TYPE = 'application/scim+json';
export const CORE_USER = 'urn:ietf:params:scim:schemas:core:2.0:User';
export const ENTERPRISE_USER = 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User';
export const CORE_GROUP = 'urn:ietf:params:scim:schemas:core:2.0:Group';
export const PATCH_OP = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';
export const ERROR = 'urn:ietf:params:scim:api:messages:2.0:Error';
export const LIST_RESPONSE = 'urn:ietf:params:scim:api:messages:2.0:ListResponse';

type Method = 'post' | 'put' | 'patch';

/** A SCIM request with a body, sent as application/scim+json. */
export function scimSend(method: Method, path: string, body: object) {
  return t
    .http()
    [method](`${SCIM}${path}`)
    .set('Content-Type', SCIM_TYPE)
    .send(JSON.stringify(body));
}

export const scimGet = (path: string) => t.http().get(`${SCIM}${path}`);

/** A PatchOp body of these operations. */
export const patchOp = (...operations: object[]) => ({
  schemas: [PATCH_OP],
  Operations: operations,
});

/** The SCIM error body of a status and scimType. */
export const scimError = (status: number, scimType?: string) => ({
  schemas: [ERROR],
  status: String(status),
  ...(scimType ? { scimType } : {}),
  detail: expect.any(String),
});

/** A user as Entra ID's provisioning creates one (its documented request, learn.microsoft.com). */
export const entraUser = (userName: string) => ({
  schemas: [CORE_USER, ENTERPRISE_USER],
  externalId: `ext-${userName}`,
  userName,
  active: true,
  displayName: 'Ada Lovelace',
  emails: [{ primary: true, type: 'work', value: userName }],
  name: { formatted: 'Ada Lovelace', familyName: 'Lovelace', givenName: 'Ada' },
  title: 'Analyst',
  [ENTERPRISE_USER]: { employeeNumber: '1815', department: 'Engines' },
});

/** A group as a provider creates one: its name and its members' ids. */
export const scimGroup = (displayName: string, memberIds: string[] = [], extra: object = {}) => ({
  schemas: [CORE_GROUP],
  displayName,
  members: memberIds.map((value) => ({ value })),
  ...extra,
});

/** Creates a SCIM user named `userName` and answers its id. */
export async function scimUserId(userName: string): Promise<string> {
  const res = await scimSend('post', '/Users', { schemas: [CORE_USER], userName }).expect(201);
  return res.body.id as string;
}
