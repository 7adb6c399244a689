import type { Config } from 'jest';

// With DATABASE_URL set, each test file gets its own database on that server. Without it, each
// jest worker has an embedded PostgreSQL (PGlite) of its own, which serves one session at a time:
// its files run one after another, each on a freshly emptied schema. Files run in parallel either way.

// Three tiers, one folder each (test/README.md), each runnable alone (npm run test:unit,
// test:component, test:system); npm test runs all:
//   test/unit/       pure functions and files read from the tree: no database, no server, no process
//   test/component/  the app through HTTP (supertest, or a loopback socket) on a database: the inner loop
//   test/system/     real processes and clusters, crashes, the browser, the tools' CLIs, fuzzing at full size
// The system tests that start clusters of their own, kill processes or measure a recovery are a fourth
// project, `faults`: npm test runs it after the others, alone and one file at a time (scripts/tiers/), so
// that no fault's load and no recovery's clock ever shares the two cores with another test.
const TIERS = ['unit', 'component', 'system'] as const;

/** The fault tier's files, under test/system/ (docs/testing.md, "The fault tier"). */
export const FAULT_FILES = [
  'process/durability.test.ts',
  'process/failover.test.ts',
  'process/faults.test.ts',
  'process/isolatedPrimary.test.ts',
  'process/keeperCutOff.test.ts',
  'process/keyRevocation.test.ts',
  'process/pooler.test.ts',
  'process/replica.test.ts',
  'process/scaleout.test.ts',
  'process/targetSessionAttrs.test.ts',
  'process/webhooks.test.ts',
  'process/wrongAnswers.test.ts',
  'store/commitFaults.test.ts',
  'store/pipelinedPooler.test.ts',
];
/**
 * The system tests that never use the embedded database: the browser's and the image's start servers on a
 * database of their own, and the spec diff's and these tools' use none. The embedded pass of .ci/run
 * (TEST_EMBEDDED_PASS=1) leaves them out with the fault tier: each ran once already, against PostgreSQL.
 */
const NOT_ON_THE_EMBEDDED_DATABASE = [
  '/test/system/browser/',
  '/test/system/process/container\\.test\\.ts$',
  '/test/system/spec-diff/',
  ...['backendPatch', 'contract', 'generate', 'imageBuildStage', 'soakKeptMemory', 'splitSpec', 'workflow', 'workflowGate'].map(
    (name) => `/test/system/tools/${name}\\.test\\.ts$`,
  ),
];
const faultPaths = FAULT_FILES.map((file) => `<rootDir>/test/system/${file}`);

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
  projects: [
    ...TIERS.map((tier) => ({
      ...shared,
      ...(tier === 'unit' ? {} : databases),
      displayName: tier,
      testMatch: [`<rootDir>/test/${tier}/**/*.test.ts`],
      // The system project leaves the fault tier's files to the faults project.
      ...(tier === 'system'
        ? {
            testPathIgnorePatterns: [
              '/node_modules/',
              ...FAULT_FILES.map((f) => `/test/system/${f.replace(/\./g, '\\.')}$`),
              ...(process.env.TEST_EMBEDDED_PASS === '1' ? NOT_ON_THE_EMBEDDED_DATABASE : []),
            ],
          }
        : {}),
    })),
    { ...shared, ...databases, displayName: 'faults', testMatch: faultPaths },
  ],
} satisfies Config;
