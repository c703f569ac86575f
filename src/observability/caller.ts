/**
 * Who made a request (the `sub` and client of its token), or why authentication refused it, as
 * the request's log line reports it. Keyed by the request object (an Express request or a gRPC
 * call), so nothing is attached to it and nothing outlives it.
 */
export interface CallerFields {
  sub?: string;
  clientId?: string;
  /** The reason of a 401 or 403 (auth_rejections_total's label). */
  rejected?: string;
}

const callers = new WeakMap<object, CallerFields>();

export function setCaller(request: object, fields: CallerFields): void {
  callers.set(request, fields);
}

export function callerOf(request: object): CallerFields | undefined {
  return callers.get(request);
}
