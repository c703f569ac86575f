/**
 * The classes of work admission tells apart, in the order they are shed, first to last: the
 * change feed's long polls and watches, lists, reads by id, writes. Probes, gRPC health,
 * /metrics and the shutdown path have no class: they are never shed.
 */
export const WORK_CLASSES = ['feed', 'list', 'read', 'write'] as const;
export type WorkClass = (typeof WORK_CLASSES)[number];

/** Why a request was turned away (the `reason` label of overload_rejected_total). */
export const REJECT_REASONS = ['limit', 'queue_timeout', 'deadline', 'client_gone'] as const;
export type RejectReason = (typeof REJECT_REASONS)[number];

const WRITE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
/** `/users/7/posts` (a list) as opposed to `/users/7/posts/3` (a read by id). */
const POSTS_LIST = /^\/users\/[^/]+\/posts\/?$/;
/** The liveness and readiness probes (the kubelet's). */
const PROBES = new Set(['/health', '/health/', '/health/ready', '/health/ready/']);

/**
 * The class of an HTTP request from its method and path alone (no routing, no body), or
 * undefined for a probe, which is never shed. `path` is the request target without its query.
 */
export function httpWorkClass(method: string, path: string): WorkClass | undefined {
  if (PROBES.has(path)) return undefined;
  if (WRITE_METHODS.has(method)) return 'write';
  if (path === '/users/changes' || path.startsWith('/users/changes/')) return 'feed';
  if (path === '/users' || path === '/users/' || POSTS_LIST.test(path)) return 'list';
  return 'read';
}

/** The class of a method of the `users.Users` gRPC service (health is not routed here). */
export function grpcWorkClass(method: string): WorkClass {
  return method === 'ListUserChanges' || method === 'WatchUserChanges' ? 'feed' : 'read';
}
