import { connect } from '../../src/store/database/db';
import { scratchDatabase } from '../../scripts/lib/processes';

/**
 * Test databases. globalSetup decides the mode and hands it to the test files through
 * the environment (jest's workers start after globalSetup and inherit it).
 *   TEST_DB_MODE=server   TEST_ADMIN_URL: a real server; every test file creates its own database
 *                         (TEST_TEMPLATE_DB: one migrated at the start, copied by freshDatabase({ migrated: true })).
 *   TEST_DB_MODE=embedded TEST_EMBEDDED_URLS: a PGlite per jest worker; every test file empties its worker's schema.
 */
export const TEST_DB_PREFIX = 'animal_store_test';

export interface TestDatabase {
  url: string;
  /** Pool size for this database: 1 on PGlite, which serves one session at a time. */
  max: number;
  drop(): Promise<void>;
}

/** The embedded PGlite of this jest worker (JEST_WORKER_ID counts from 1; alone, in band, it is 1). */
export function embeddedUrl(): string {
  const urls = (process.env.TEST_EMBEDDED_URLS ?? '').split(',');
  const url = urls[(Number(process.env.JEST_WORKER_ID ?? 1) - 1) % urls.length];
  if (!url) throw new Error('TEST_EMBEDDED_URLS is not set: run the tests through jest (globalSetup sets it)');
  return url;
}

/**
 * A database of this test file's own, empty. `migrated`, on a server: a copy of the run's migrated
 * template, as after a first start-up (0.25 s less per app); the embedded one is emptied either way.
 */
export async function freshDatabase({ migrated = false } = {}): Promise<TestDatabase> {
  if (process.env.TEST_DB_MODE === 'embedded') {
    const url = embeddedUrl();
    const admin = connect(url, { max: 1 });
    try {
      await admin.unsafe('DROP SCHEMA IF EXISTS public CASCADE; CREATE SCHEMA public;');
    } finally {
      await admin.end();
    }
    return { url, max: 1, drop: async () => {} };
  }
  const adminUrl = process.env.TEST_ADMIN_URL;
  if (!adminUrl) throw new Error('TEST_ADMIN_URL is not set: run the tests through jest (globalSetup sets it)');
  const template = migrated ? process.env.TEST_TEMPLATE_DB : undefined;
  const db = await scratchDatabase(adminUrl, `${TEST_DB_PREFIX}_${process.env.TEST_RUN_ID}`, { template });
  return { url: db.url, max: 4, drop: db.drop };
}

/**
 * A server process's database settings for `url` (a test database): on the embedded PostgreSQL, which
 * serves one session at a time, one connection, and the unsafe-database check a warning (it has no fsync).
 */
export function serverDatabaseEnv(url: string): Record<string, string> {
  return {
    DATABASE_URL: url,
    ...(process.env.TEST_DB_MODE === 'embedded' ? { ON_UNSAFE_DATABASE: 'warn', DATABASE_POOL_SIZE: '1' } : {}),
  };
}
