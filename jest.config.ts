import type { Config } from 'jest';

// With DATABASE_URL set, each test file gets its own database on that server and files
// run in parallel. Without it, one embedded PostgreSQL (PGlite) serves one session at a
// time, so files run one after another, each on a freshly emptied schema.
const embedded = !process.env.DATABASE_URL;

// Three tiers, each runnable alone (npm run test:unit, test:component, test:system); npm test runs all.
//   unit       pure functions and files read from the tree: no database, no server, no process
//   component  the app through HTTP (supertest, or a loopback socket) on a database: the inner loop
//   system     real processes and clusters, crashes, the browser, the tools' CLIs, fuzzing at full size
const UNIT = ['body', 'config', 'containers', 'cursors', 'errors', 'layers', 'markdown', 'specDiffCorpus', 'specDiffRules'];
const SYSTEM = [
  'backendPatch',
  'browser',
  'contract',
  'docs',
  'durability',
  'editLoop',
  'faults',
  'fuzz',
  'generate',
  'generators',
  'pooler',
  'replica',
  'scaleout',
  'server',
  'splitSpec',
  'tooling',
];
const files = (names: string[]) => names.map((name) => `<rootDir>/test/${name}.test.ts`);

const shared = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  transform: {
    '^.+\\.ts$': ['@swc/jest', { jsc: { parser: { syntax: 'typescript' }, target: 'es2022' }, module: { type: 'commonjs' } }],
  },
} satisfies Config;

export default {
  // A global option: jest-circus reads the timeout from the global config only, and a
  // project's own testTimeout is ignored (a test without one of its own got 5 s in CI).
  testTimeout: 30_000,
  globalSetup: '<rootDir>/test/support/globalSetup.ts',
  globalTeardown: '<rootDir>/test/support/globalTeardown.ts',
  maxWorkers: embedded ? 1 : 2,
  projects: [
    { ...shared, displayName: 'unit', testMatch: files(UNIT) },
    // Everything not named as unit or system: a new test file runs in the inner loop until it is classified.
    {
      ...shared,
      displayName: 'component',
      testMatch: ['<rootDir>/test/**/*.test.ts'],
      testPathIgnorePatterns: [...files(UNIT), ...files(SYSTEM)].map((f) => f.replace('<rootDir>', '')),
    },
    { ...shared, displayName: 'system', testMatch: files(SYSTEM) },
  ],
} satisfies Config;
