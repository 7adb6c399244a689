import { connect } from '../../../src/store/database/db';
import { NotReadyError } from '../../../src/store/errors';
import { createHealthCheck } from '../../../src/store/database/health';
import { migrate } from '../../../src/store/database/migrate';
import { type TestDatabase, freshDatabase } from '../../support/databases';

// Readiness when DATABASE_URL asks for the primary: a server that answers reads but refuses
// writes (pg_auto_failover holds a promoted standby read-only until the old primary is demoted)
// is not ready, though its reads work; the same server for a plain DATABASE_URL is.
const embedded = process.env.TEST_DB_MODE === 'embedded';

(embedded ? describe.skip : describe)('readiness of a database that takes no writes', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await freshDatabase();
    const sql = connect(db.url, { max: 1 });
    await migrate(sql);
    // New sessions of this database start read-only, as on such a server.
    await sql.unsafe(`ALTER DATABASE ${new URL(db.url).pathname.slice(1)} SET default_transaction_read_only = on`);
    await sql.end();
  });
  afterAll(() => db.drop());

  test('when DATABASE_URL follows the primary and the server is read-only, then it is not ready: database_failover; without following, it is ready', async () => {
    const sql = connect(db.url, { max: 1 });
    try {
      const err = await createHealthCheck(sql, undefined, { followsPrimary: true })
        .migrations()
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(NotReadyError);
      expect((err as Error).message).toBe('Not ready: database_failover (the primary of DATABASE_URL does not take writes yet)');
      const known = (await createHealthCheck(sql).migrations()).known;
      await expect(createHealthCheck(sql).migrations()).resolves.toEqual({ applied: known, known });
    } finally {
      await sql.end();
    }
  });
});
