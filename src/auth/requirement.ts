import type { ExecutionContext } from '@nestjs/common';
import type { Reflector } from '@nestjs/core';
import { AUTH_REQUIREMENT, type AuthRequirement } from './scopes.js';

/** Deny by default: a guarded handler that declares nothing needs a valid token. */
const TOKEN_REQUIRED: AuthRequirement = { kind: 'token' };

/** Each handler's requirement, read from its metadata on its first call (decorators are static). */
const requirements = new WeakMap<object, { owner: object; requirement: AuthRequirement }>();

/** The requirement the handler (or else its controller) declares: the one scope map of both guards. */
export function requirementOf(reflector: Reflector, context: ExecutionContext): AuthRequirement {
  const handler = context.getHandler();
  const owner = context.getClass();
  const known = requirements.get(handler);
  if (known?.owner === owner) return known.requirement;
  const requirement =
    reflector.getAllAndOverride<AuthRequirement | undefined>(AUTH_REQUIREMENT, [handler, owner]) ??
    TOKEN_REQUIRED;
  requirements.set(handler, { owner, requirement });
  return requirement;
}
