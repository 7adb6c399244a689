import type { Config } from 'jest';

// With DATABASE_URL set, each test file gets its own database on that server and files
// run in parallel. Without it, one embedded PostgreSQL (PGlite) serves one session at a
// time, so files run one after another, each on a freshly emptied schema.
const embedded = !process.env.DATABASE_URL;

export default {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  transform: {
    '^.+\\.ts$': ['@swc/jest', { jsc: { parser: { syntax: 'typescript' }, target: 'es2022' }, module: { type: 'commonjs' } }],
  },
  globalSetup: '<rootDir>/test/support/globalSetup.ts',
  globalTeardown: '<rootDir>/test/support/globalTeardown.ts',
  maxWorkers: embedded ? 1 : 2,
  testTimeout: 30_000,
} satisfies Config;
