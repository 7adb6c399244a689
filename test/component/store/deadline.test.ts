import { type Sql, connect, queriesInFlight, withDeadline } from '../../../src/store/database/db';
import { DatabaseUnavailableError, DeadlineExceededError } from '../../../src/store/errors';
import { type TestDatabase, freshDatabase } from '../../support/databases';
import { type Proxy, proxyTo } from '../../support/proxy';

// A query past its deadline is cancelled over a new connection. When the server cannot be
// reached any more (a replica stopping, a primary gone), that cancel request fails: the query
// must still end with DeadlineExceededError, and the failure must not be an unhandled
// rejection, which ends the process (it did: a replica stopping under load crashed the server).
const embedded = process.env.TEST_DB_MODE === 'embedded';

(embedded ? describe.skip : describe)('a query past its deadline (withDeadline)', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await freshDatabase();
  });
  afterAll(() => db.drop());

  /**
   * Runs `body` with a pool of one through a proxy to the test database, then waits a moment for
   * late rejections; returns the rejections nobody handled meanwhile.
   */
  const unhandledAfter = async (body: (proxy: Proxy, sql: Sql) => Promise<void>): Promise<unknown[]> => {
    const proxy = await proxyTo(db.url);
    const sql = connect(proxy.url, { max: 1 });
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      await body(proxy, sql);
      // A refused connection's rejection surfaces within a few ticks.
      await new Promise((resolve) => setTimeout(resolve, 500));
      return unhandled;
    } finally {
      process.off('unhandledRejection', onUnhandled);
      proxy.close();
      await sql.end({ timeout: 1 });
    }
  };

  test('when the server cannot be reached for the cancel request, then the query still ends at its deadline and nothing is left unhandled', async () => {
    const unhandled = await unhandledAfter(async (proxy, sql) => {
      await sql`SELECT 1`; // the connection is open before the proxy stops taking new ones
      const slow = withDeadline(sql`SELECT pg_sleep(2)`, Date.now() + 300);
      proxy.refuseNew();
      await expect(slow).rejects.toBeInstanceOf(DeadlineExceededError);
    });
    // The cancel request's connection is refused at once.
    expect(unhandled).toEqual([]);
  });

  test('when a new connection is cut at its first statement and the server then refuses connections, then the query fails as unavailable and nothing is left unhandled', async () => {
    // postgres.js reads the server's array types on a new connection unless told not to; that
    // read's failure, on a connection cut as the replica stopped, was an unhandled rejection
    // and ended the process (src/store/database/db.ts: fetch_types).
    const unhandled = await unhandledAfter(async (proxy, sql) => {
      proxy.cutAtFirstStatement();
      await expect(withDeadline(sql`SELECT 1 AS one`, Date.now() + 3_000)).rejects.toBeInstanceOf(DatabaseUnavailableError);
    });
    expect(unhandled).toEqual([]);
  });
  test('when a query is answered, fails, or outlives its deadline, then it is counted in flight until then, once, even when it settles after its deadline', async () => {
    const sql = connect(db.url, { max: 2 });
    try {
      const before = queriesInFlight();
      const answered = withDeadline(sql<{ one: number }[]>`SELECT 1 AS one`, Date.now() + 3_000);
      expect(queriesInFlight()).toBe(before + 1);
      expect(await answered).toEqual([{ one: 1 }]);
      expect(queriesInFlight()).toBe(before);

      // The driver's own error, not a deadline: division by zero.
      await expect(withDeadline(sql`SELECT 1 / 0`, Date.now() + 3_000)).rejects.toMatchObject({ code: '22012' });
      expect(queriesInFlight()).toBe(before);

      const slow = sql`SELECT pg_sleep(1)`;
      await expect(withDeadline(slow, Date.now() + 100)).rejects.toBeInstanceOf(DeadlineExceededError);
      expect(queriesInFlight()).toBe(before);
      // The query's own outcome (cancelled by the deadline) comes after: it is not counted out a second time.
      await slow.catch(() => undefined);
      expect(queriesInFlight()).toBe(before);
    } finally {
      await sql.end({ timeout: 1 });
    }
  });
});
