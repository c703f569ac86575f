import { describe, expect, it } from '@jest/globals';
import { grpcWorkClass, httpWorkClass } from './work-class.js';

describe('work classes', () => {
  it.each([
    ['GET', '/health', undefined],
    ['GET', '/health/ready', undefined],
    ['GET', '/users/changes', 'feed'],
    ['GET', '/users', 'list'],
    ['GET', '/users/7/posts', 'list'],
    ['GET', '/users/7', 'read'],
    ['HEAD', '/users/7/posts/3', 'read'],
    ['GET', '/info', 'read'],
    ['POST', '/users', 'write'],
    ['PATCH', '/users/7', 'write'],
    ['DELETE', '/users/7', 'write'],
  ])('%s %s is %s', (method, path, workClass) => {
    expect(httpWorkClass(method, path)).toBe(workClass);
  });

  it('classes gRPC methods: the feed apart from GetUser', () => {
    expect(['GetUser', 'ListUserChanges', 'WatchUserChanges'].map(grpcWorkClass)).toEqual([
      'read',
      'feed',
      'feed',
    ]);
  });
});
