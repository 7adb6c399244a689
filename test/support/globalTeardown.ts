import { connect } from '../../src/store/db';
import { TEST_DB_PREFIX } from './databases';

export default async function globalTeardown(): Promise<void> {
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
