// API keys are compared in constant time: SHA-256 digests, crypto.timingSafeEqual, every key every
// time. Checked on the code's calls and its source, not by timing.
import { jest } from '@jest/globals';
import type { ExecutionContext } from '@nestjs/common';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { projectRoot } from '../../src/project-root.js';
import { INVALID_API_KEY } from '../support/expected-errors.js';

const ROOT = projectRoot();

describe('API key comparison (code level)', () => {
  it('digests the presented key and every configured key with SHA-256 and compares them all with timingSafeEqual', async () => {
    // A fresh copy of the guard module, loaded with node:crypto's timingSafeEqual wrapped to
    // record its calls (the copy the app uses was loaded before any mock could apply).
    const crypto = await import('node:crypto');
    const calls: [Buffer, Buffer][] = [];
    let ApiKeyGuard!: typeof import('../../src/utility/api-key.guard.js').ApiKeyGuard;
    let AppConfig!: typeof import('../../src/config/app-config.js').AppConfig;
    let validateEnv!: typeof import('../../src/config/env.validation.js').validateEnv;
    await jest.isolateModulesAsync(async () => {
      jest.unstable_mockModule('node:crypto', () => ({
        ...crypto,
        default: crypto,
        timingSafeEqual: (a: Buffer, b: Buffer) => {
          calls.push([a, b]);
          return crypto.timingSafeEqual(a, b);
        },
      }));
      ({ ApiKeyGuard } = await import('../../src/utility/api-key.guard.js'));
      ({ AppConfig } = await import('../../src/config/app-config.js'));
      ({ validateEnv } = await import('../../src/config/env.validation.js'));
    });
    const keys = ['first-key', 'a-much-longer-second-key-0123456789', 'k3'];
    const guard = new ApiKeyGuard(AppConfig.fromEnv(validateEnv({ API_KEYS: keys.join(',') })));
    const context = (headers: Record<string, unknown>) =>
      ({
        switchToHttp: () => ({ getRequest: () => ({ headers }) }),
      }) as unknown as ExecutionContext;
    const sha256 = (value: string) => crypto.createHash('sha256').update(value, 'utf8').digest();

    const presented = ['', 'x', 'first-key', 'k3', 'first-kez', 'f'.repeat(10_000), keys[1]];
    for (const value of presented) {
      calls.length = 0;
      const accepted = keys.includes(value);
      if (accepted) expect(guard.canActivate(context({ 'x-api-key': value }))).toBe(true);
      else
        // (by message: the isolated module copy has its own UnauthorizedException class)
        expect(() => guard.canActivate(context({ 'x-api-key': value }))).toThrow(
          INVALID_API_KEY.error,
        );
      // Every configured key, every time (no early exit on a match or a mismatch), each compare
      // on two 32-byte digests: neither the content nor the length of a key changes the work done.
      expect(calls).toHaveLength(keys.length);
      for (const [a, b] of calls) {
        expect([a.length, b.length]).toEqual([32, 32]);
        expect(b.equals(sha256(value))).toBe(true);
      }
      expect(calls.map(([a]) => a.toString('hex')).sort()).toEqual(
        keys.map((key) => sha256(key).toString('hex')).sort(),
      );
    }
  });

  it('has no other comparison of the key in the guard source', () => {
    const source = readFileSync(path.join(ROOT, 'src', 'utility', 'api-key.guard.ts'), 'utf8');
    expect(source).toMatch(/timingSafeEqual\(/);
    expect(source).toMatch(/createHash\('sha256'\)/);
    // No early-exit search or plain string comparison of keys.
    expect(source).not.toMatch(/\.(includes|indexOf|some|find|findIndex)\(/);
    const comparisons = source.replace(/typeof presented === 'string'/g, '');
    expect(comparisons).not.toMatch(/presented\s*[!=]==?|[!=]==?\s*presented|key\s*[!=]==?/);
    expect(source).not.toMatch(/\.compare\(|\.equals\(/);
  });
});
