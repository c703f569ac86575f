// NestJS 12 is ESM-only, so Jest runs in ESM mode (NODE_OPTIONS=--experimental-vm-modules, see package.json).
/** @type {import('jest').Config} */
export default {
  testEnvironment: 'node',
  rootDir: '.',
  testRegex: ['src/.*\\.spec\\.ts$', 'test/.*\\.(e2e-)?spec\\.ts$'],
  extensionsToTreatAsEsm: ['.ts'],
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  transform: {
    '^.+\\.ts$': [
      '@swc/jest',
      {
        jsc: {
          parser: { syntax: 'typescript', decorators: true },
          transform: { legacyDecorator: true, decoratorMetadata: true },
          target: 'es2022',
          keepClassNames: true,
        },
        module: { type: 'es6' },
      },
    ],
  },
  globalSetup: '<rootDir>/test/support/global-setup.mjs',
  globalTeardown: '<rootDir>/test/support/global-teardown.mjs',
  testTimeout: 60000,
  // The spec files run one at a time (they share the test database), in one worker process that
  // is replaced once it holds more than 1 GB after a file. Jest's ESM mode keeps every file's
  // modules: run in Jest's own process (--runInBand), the heap reached 3 GB of Node 20's 4 GB by
  // the 80th of 117 files, and the last files ran up to 10 times slower, collecting garbage.
  maxWorkers: 1,
  workerIdleMemoryLimit: '1GB',
};
