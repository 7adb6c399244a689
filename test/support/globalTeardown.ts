import { connect } from '../../src/store/database/db';
import { TEST_DB_PREFIX } from './databases';

export default async function globalTeardown(): Promise<void> {
  const delay = globalThis.embeddedHostDelay;
  if (delay) {
    // Said at the end of every embedded run: a request past its 5 s deadline there (a 503) is the host's stall
    // or the test's own, and this tells which.
    const ms = (ns: number) => Math.round(ns / 1e6);
    process.stderr.write(
      `embedded PostgreSQL host: event loop held up to ${ms(delay.max)} ms (p99 ${ms(delay.percentile(99))} ms): a query of any worker may have waited as long\n`,
    );
  }
  if (globalThis.embeddedTestPostgres) {
    await Promise.all(globalThis.embeddedTestPostgres.map((db) => db.stop()));
    return;
  }
  // Each file drops its own database; this removes what a crashed file left behind.
  const admin = connect(process.env.TEST_ADMIN_URL as string, { max: 1 });
  try {
    const left = await admin<{ datname: string }[]>`
      SELECT datname FROM pg_database WHERE datname LIKE ${`${TEST_DB_PREFIX}_${process.env.TEST_RUN_ID}_%`}`;
    for (const { datname } of left) await admin.unsafe(`DROP DATABASE IF EXISTS "${datname}" WITH (FORCE)`);
  } finally {
    await admin.end();
  }
}
