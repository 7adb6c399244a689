import type { Config } from 'jest';

// With DATABASE_URL set, each test file gets its own database on that server. Without it, each
// jest worker has an embedded PostgreSQL (PGlite) of its own, which serves one session at a time:
// its files run one after another, each on a freshly emptied schema. Files run in parallel either way.

// Three tiers, one folder each (test/README.md), each runnable alone (npm run test:unit,
// test:component, test:system); npm test runs all:
//   test/unit/       pure functions and files read from the tree: no database, no server, no process
//   test/component/  the app through HTTP (supertest, or a loopback socket) on a database: the inner loop
//   test/system/     real processes and clusters, crashes, the browser, the tools' CLIs, fuzzing at full size
const TIERS = ['unit', 'component', 'system'] as const;

const shared = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  transform: {
    '^.+\\.ts$': ['@swc/jest', { jsc: { parser: { syntax: 'typescript' }, target: 'es2022' }, module: { type: 'commonjs' } }],
  },
} satisfies Config;

// The run's databases (test/support/globalSetup.ts): a migrated template on DATABASE_URL's server,
// or one embedded PostgreSQL per worker. Set on the tiers that use them, not globally: jest runs a
// project's globalSetup only when one of its files runs, so `npm run test:unit` starts no database
// (the two embedded ones took 7 s of its 11). Both tiers name the same module: it runs once.
const databases = {
  globalSetup: '<rootDir>/test/support/globalSetup.ts',
  globalTeardown: '<rootDir>/test/support/globalTeardown.ts',
};

export default {
  // A global option: jest-circus reads the timeout from the global config only, and a
  // project's own testTimeout is ignored (a test without one of its own got 5 s in CI).
  testTimeout: 30_000,
  maxWorkers: 2,
  // After every run: each tier's time and the slowest files (test/support/slowestFiles.cjs).
  reporters: ['default', '<rootDir>/test/support/slowestFiles.cjs'],
  projects: TIERS.map((tier) => ({
    ...shared,
    ...(tier === 'unit' ? {} : databases),
    displayName: tier,
    testMatch: [`<rootDir>/test/${tier}/**/*.test.ts`],
  })),
} satisfies Config;
