import { type WriteTransaction, committedAfterAll } from '../../../src/store/write/commit';
import { type Sql, connect } from '../../../src/store/database/db';
import { migrate } from '../../../src/store/database/migrate';
import { type TestDatabase, freshDatabase } from '../../support/databases';

// How a create whose COMMIT's answer was lost finds out whether it committed (src/store/write/commit.ts):
// by its row, not by its transaction id alone. The creates answered 503 around frozen and caught
// COMMITs, through a TCP proxy and with waits past deadlines, are test/system/store/commitFaults.test.ts.
const embedded = process.env.TEST_DB_MODE === 'embedded';

(embedded ? describe.skip : describe)('a commit whose answer was lost is proven by its row, not by its transaction id alone', () => {
  let db: TestDatabase;
  let sql: Sql;
  beforeAll(async () => {
    db = await freshDatabase();
    sql = connect(db.url, { max: 2 });
    await migrate(sql);
  });
  afterAll(async () => {
    await sql.end();
    await db.drop();
  });

  /** A pet inserted and committed, with the transaction that wrote it as a create records it. */
  const insert = async (name: string): Promise<WriteTransaction> => {
    const [row] = await sql.begin(
      (tx) =>
        tx<{ id: string; createdAt: string; xid: string; pid: number }[]>`
          INSERT INTO pets (name, category_id) VALUES (${name}, 1)
          RETURNING id, created_at::text AS "createdAt", pg_current_xact_id()::text AS xid, pg_backend_pid() AS pid`,
    );
    if (!row) throw new Error('no row');
    return { xid: row.xid, pid: row.pid, row: { table: 'pets', id: row.id, createdAt: row.createdAt } };
  };

  test('when its transaction committed and its row is there, then it committed', async () => {
    expect(await committedAfterAll(sql, await insert('proven'), new Error('lost'))).toBe(true);
  });

  test("when its transaction id says committed but the row is another transaction's (the id reused after a crash), then it did not commit", async () => {
    const ours = await insert('ours');
    const other = await insert('other');
    // Our row as recorded, under the other transaction's id: what a reused id looks like.
    expect(await committedAfterAll(sql, { ...ours, xid: other.xid }, new Error('lost'))).toBe(false);
    // And our id with a row that is not there (its insert's WAL lost in the crash).
    expect(await committedAfterAll(sql, { ...ours, row: { ...ours.row, id: '999999999' } }, new Error('lost'))).toBe(false);
  });

  test('when its transaction id is in the future (none of its WAL survived a crash), then it did not commit, and no 500 is made of it', async () => {
    const ours = await insert('future');
    const future = (BigInt(ours.xid) + 1_000_000n).toString();
    expect(await committedAfterAll(sql, { ...ours, xid: future }, new Error('lost'))).toBe(false);
  });
});
