import { randomBytes } from 'node:crypto';
import { type EmbeddedPostgres, startEmbeddedPostgres } from '../../src/store/embedded';

declare global {
  // Handed from globalSetup to globalTeardown, which run in the same process.
  var embeddedTestPostgres: EmbeddedPostgres[] | undefined;
}

export default async function globalSetup(globalConfig: { maxWorkers: number }): Promise<void> {
  process.env.TEST_RUN_ID = `${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;
  if (process.env.DATABASE_URL) {
    process.env.TEST_DB_MODE = 'server';
    process.env.TEST_ADMIN_URL = process.env.DATABASE_URL;
    return;
  }
  // PGlite cannot start inside a test file's sandbox, so it runs here, in memory, for the whole
  // run: one for each jest worker (it serves one session at a time), each worker's files on its own.
  globalThis.embeddedTestPostgres = await Promise.all(
    Array.from({ length: Math.max(1, globalConfig.maxWorkers) }, () => startEmbeddedPostgres()),
  );
  process.env.TEST_DB_MODE = 'embedded';
  process.env.TEST_EMBEDDED_URLS = globalThis.embeddedTestPostgres.map((db) => db.url).join(',');
}
