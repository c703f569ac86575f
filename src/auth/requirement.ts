import type { ExecutionContext } from '@nestjs/common';
import type { Reflector } from '@nestjs/core';
import { AUTH_REQUIREMENT, type AuthRequirement } from './scopes.js';

/** Deny by default: a guarded handler that declares nothing needs a valid token. */
const TOKEN_REQUIRED: AuthRequirement = { kind: 'token' };

/** The requirement the handler (or else its controller) declares: the one scope map of both guards. */
export function requirementOf(reflector: Reflector, context: ExecutionContext): AuthRequirement {
  return (
    reflector.getAllAndOverride<AuthRequirement | undefined>(AUTH_REQUIREMENT, [
      context.getHandler(),
      context.getClass(),
    ]) ?? TOKEN_REQUIRED
  );
}
