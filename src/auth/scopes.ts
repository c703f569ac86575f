/** The scopes a token may carry for the users API. Write does not imply read. */
export const SCOPES = ['users:read', 'users:write'] as const;
/**
 * The scope of /scim/v2 (docs/provisioning.md), apart from SCOPES: those routes also admit static
 * provider tokens, so a mesh in front cannot decide them from the JWT alone.
 */
export const SCIM_SCOPE = 'scim';
export type Scope = (typeof SCOPES)[number] | typeof SCIM_SCOPE;

/**
 * What a handler asks of its caller, declared with one decorator (auth.decorators.ts):
 * a scope, a valid token without a scope, or nothing at all.
 */
export type AuthRequirement =
  { kind: 'scope'; scope: Scope } | { kind: 'token' } | { kind: 'public' };

/** Reflect metadata key of a handler's (or controller's) AuthRequirement. */
export const AUTH_REQUIREMENT = 'users-service:auth-requirement';

/**
 * The scopes granted by a token's claims: `scope` (RFC 8693, space-separated) and `scp`
 * (an array, as Okta and Azure AD send it, or a space-separated string). Both are honoured.
 */
export function grantedScopes(claims: Record<string, unknown>): Set<string> {
  const granted = new Set<string>();
  const add = (value: unknown) => {
    if (typeof value === 'string') {
      for (const scope of value.split(' ')) if (scope) granted.add(scope);
    } else if (Array.isArray(value)) {
      for (const item of value) if (typeof item === 'string') add(item);
    }
  };
  add(claims.scope);
  add(claims.scp);
  return granted;
}
