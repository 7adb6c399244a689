import { type Sql, connect } from '../../../src/store/database/db';
import { type TestDatabase, freshDatabase } from '../../support/databases';

// postgres.js prepares each statement once per connection and binds it by name after that. When the
// server answers that it no longer has the statement (26000, "prepared statement … does not exist":
// a session that lost it, a pooler's other server connection) or that its plan went stale, postgres.js
// prepares it again and retries. Two faults of that retry gave wrong answers nobody could detect
// (patches/README.md, postgres.js parts 014 and 015): the retry's messages and another query's were
// written between a statement's description and its Bind, so each took the other's answer (an
// aggregate came back with no row during a failover), and a retried boolean true was bound as false.
// DEALLOCATE ALL makes the server drop the connection's statements, as those faults do.

/** The text of the statement whose retry the tests watch. */
const WATCHED = 'SELECT $1::int AS a, $2::text AS label';

describe('a prepared statement the server no longer has, retried', () => {
  let db: TestDatabase;
  let sql: Sql;
  /** Called with the text of each statement as it is sent (the pool's `statements` hook). */
  let onSend: (text: string) => void = () => {};
  beforeAll(async () => {
    db = await freshDatabase();
    // One connection: every query below goes to the same session, pipelined as postgres.js sends them.
    sql = connect(db.url, { max: 1, statements: (_connection, text) => onSend(text) });
    await sql`SELECT 1`;
  });
  afterAll(async () => {
    await sql.end({ timeout: 1 });
    await db.drop();
  });

  const watched = (a: number, label: string) => sql<{ a: number; label: string }[]>`SELECT ${a}::int AS a, ${label}::text AS label`;
  const dropStatements = () => sql.unsafe('DEALLOCATE ALL', [], { prepare: false });

  test('when a query is sent while a retried statement is prepared again, then each gets its own answer, and so does every query after them', async () => {
    expect([...(await watched(0, 'first'))]).toEqual([{ a: 0, label: 'first' }]);
    for (let round = 1; round <= 3; round++) {
      await dropStatements();
      // The watched statement is sent twice: bound by name (refused, 26000), then prepared again. The
      // queries behind it are sent as that second send leaves, before the server has answered it.
      let sends = 0;
      let empty: Promise<unknown[]> | undefined;
      let rows: Promise<unknown[]> | undefined;
      onSend = (text) => {
        if (text !== WATCHED || ++sends !== 2) return;
        process.nextTick(() => {
          empty = sql`SELECT 'empty' AS never WHERE false`.execute();
          rows = sql`SELECT x FROM generate_series(1, 3) AS x`.execute();
        });
      };
      const answer = await watched(round, `round ${round}`);
      onSend = () => {};
      expect(sends).toBe(2);
      expect([...answer]).toEqual([{ a: round, label: `round ${round}` }]);
      expect([...(await empty!)]).toEqual([]);
      expect([...(await rows!)]).toEqual([{ x: 1 }, { x: 2 }, { x: 3 }]);
      // The statement prepared again describes its own columns, not those of a query answered in between.
      expect([...(await watched(round + 10, 'after'))]).toEqual([{ a: round + 10, label: 'after' }]);
    }
  });

  test('when a statement is retried while a query described first waits behind it, then each gets its own answer', async () => {
    for (let round = 1; round <= 3; round++) {
      expect([...(await watched(round, 'prepared'))]).toEqual([{ a: round, label: 'prepared' }]);
      await dropStatements();
      // Sent together: the watched statement (bound by name: refused, then prepared again as it is
      // answered) and, behind it, a statement never seen before, described before it is bound.
      const retried = watched(round, 'retried').execute();
      const described = sql.unsafe<{ b: number; round: number }[]>(`SELECT $1::int * 2 AS b, ${round} AS round`, [round]).execute();
      expect([...(await retried)]).toEqual([{ a: round, label: 'retried' }]);
      expect([...(await described)]).toEqual([{ b: round * 2, round }]);
    }
  });

  test('when a statement with boolean, null and text parameters is retried, then it is bound with the values the caller gave', async () => {
    const flags = (on: boolean, off: boolean, none: boolean | null, text: string) =>
      sql<{ on: boolean; off: boolean; none: boolean | null; text: string }[]>`
        SELECT ${on}::bool AS on, ${off}::bool AS off, ${none}::bool AS none, ${text}::text AS text`;
    expect([...(await flags(true, false, null, 't'))]).toEqual([{ on: true, off: false, none: null, text: 't' }]);
    await dropStatements();
    expect([...(await flags(true, false, null, 't'))]).toEqual([{ on: true, off: false, none: null, text: 't' }]);
  });
});
