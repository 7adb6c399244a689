import { randomBytes } from 'node:crypto';
import { type IntervalHistogram, monitorEventLoopDelay } from 'node:perf_hooks';
import { connect } from '../../src/store/database/db';
import { type EmbeddedPostgres, startEmbeddedPostgres } from '../../src/store/database/embedded';
import { migrate } from '../../src/store/database/migrate';
import { scratchDatabase } from '../../scripts/lib/processes';
import { TEST_DB_PREFIX } from './databases';

declare global {
  // Handed from globalSetup to globalTeardown, which run in the same process.
  var embeddedTestPostgres: EmbeddedPostgres[] | undefined;
  // How long this process's event loop, which runs every worker's PGlite, was held: a query waits that long.
  var embeddedHostDelay: IntervalHistogram | undefined;
}

export default async function globalSetup(globalConfig: { maxWorkers: number }): Promise<void> {
  process.env.TEST_RUN_ID = `${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;
  if (process.env.DATABASE_URL) {
    process.env.TEST_DB_MODE = 'server';
    process.env.TEST_ADMIN_URL = process.env.DATABASE_URL;
    process.env.TEST_TEMPLATE_DB = await migratedTemplate(process.env.DATABASE_URL, process.env.TEST_RUN_ID);
    return;
  }
  // PGlite cannot start inside a test file's sandbox, so it runs here, in memory, for the whole
  // run: one for each jest worker (it serves one session at a time), each worker's files on its own.
  globalThis.embeddedTestPostgres = await Promise.all(
    Array.from({ length: Math.max(1, globalConfig.maxWorkers) }, () => startEmbeddedPostgres()),
  );
  globalThis.embeddedHostDelay = monitorEventLoopDelay({ resolution: 10 });
  globalThis.embeddedHostDelay.enable();
  process.env.TEST_DB_MODE = 'embedded';
  process.env.TEST_EMBEDDED_URLS = globalThis.embeddedTestPostgres.map((db) => db.url).join(',');
}

/**
 * A database migrated as start-up migrates one, for the apps of the run to copy (CREATE DATABASE …
 * TEMPLATE): each then finds every migration applied. No session may stay on it, or a copy fails.
 */
async function migratedTemplate(adminUrl: string, runId: string): Promise<string> {
  // Named as the run's databases are: globalTeardown drops it with them.
  const template = await scratchDatabase(adminUrl, `${TEST_DB_PREFIX}_${runId}`);
  const sql = connect(template.url, { max: 1 });
  try {
    await migrate(sql);
  } finally {
    await sql.end();
  }
  return new URL(template.url).pathname.slice(1);
}
