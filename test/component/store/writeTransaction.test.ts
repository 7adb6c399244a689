import { type Sql, connect, transaction } from '../../../src/store/database/db';
import { writeTransaction } from '../../../src/store/write/transaction';
import { DeadlineExceededError } from '../../../src/store/errors';
import { type TestDatabase, freshDatabase } from '../../support/databases';

/*
 * A create's transaction runs on a reserved connection, its BEGIN sent with its first statement
 * (writeTransaction). postgres.js 3.4.9's `reserve()` hung on a pool with no open connection
 * (fetch_types: false), and its `release()` of a connection closed meanwhile put a dead one back
 * among the open: patches/README.md. These hold both, on a pool of one, where one lost or dead
 * connection is the whole pool.
 */
describe('a write on a reserved connection (writeTransaction)', () => {
  let db: TestDatabase;
  let admin: Sql;
  beforeAll(async () => {
    db = await freshDatabase();
    admin = connect(db.url, { max: 1 });
    await admin`CREATE TABLE IF NOT EXISTS marks (v text NOT NULL)`;
  });
  afterAll(async () => {
    await admin.end();
    await db.drop();
  });

  const open = () => connect(db.url, { max: 1 });
  const marks = async () => (await admin<{ v: string }[]>`SELECT v FROM marks ORDER BY v`).map((r) => r.v);
  const control = (abandoned = false) => ({ abandoned: () => abandoned, committing: () => {} });

  test('when the pool has never opened a connection, then the write runs and commits', async () => {
    const sql = open();
    try {
      const rows = await writeTransaction(sql, (tx) => tx`INSERT INTO marks VALUES ('cold') RETURNING v`, control());
      expect(rows.map((r) => r.v)).toEqual(['cold']);
      expect(await marks()).toContain('cold');
    } finally {
      await sql.end();
    }
  });

  test('when the body fails, then nothing it wrote is committed and the connection serves the next write', async () => {
    const sql = open();
    try {
      await expect(
        writeTransaction(
          sql,
          async (tx) => {
            await tx`INSERT INTO marks VALUES ('rolled back')`;
            await tx`SELECT 1 / 0`;
          },
          control(),
        ),
      ).rejects.toThrow(/division by zero/);
      await writeTransaction(sql, (tx) => tx`INSERT INTO marks VALUES ('after a failure')`, control());
      expect(await marks()).toEqual(expect.arrayContaining(['after a failure']));
      expect(await marks()).not.toContain('rolled back');
    } finally {
      await sql.end();
    }
  });

  test('when the write is abandoned before its BEGIN, then nothing is sent and it fails with DeadlineExceededError', async () => {
    const sql = open();
    try {
      await expect(writeTransaction(sql, (tx) => tx`INSERT INTO marks VALUES ('never begun')`, control(true))).rejects.toThrow(
        DeadlineExceededError,
      );
      expect(await marks()).not.toContain('never begun');
      expect(await sql`SELECT 1 AS one`).toEqual([{ one: 1 }]);
    } finally {
      await sql.end();
    }
  });

  test('when the write is abandoned after its statement ran, before its COMMIT, then it rolls back with DeadlineExceededError', async () => {
    const sql = open();
    // Not abandoned when asked before BEGIN, abandoned when asked before COMMIT: the deadline passed meanwhile.
    let asked = 0;
    const late = { abandoned: () => asked++ > 0, committing: () => {} };
    try {
      await expect(writeTransaction(sql, (tx) => tx`INSERT INTO marks VALUES ('abandoned') RETURNING v`, late)).rejects.toThrow(
        DeadlineExceededError,
      );
      expect(asked).toBe(2);
      expect(await marks()).not.toContain('abandoned');
      expect(await sql`SELECT 1 AS one`).toEqual([{ one: 1 }]);
    } finally {
      await sql.end();
    }
  });

  if (process.env.TEST_DB_MODE !== 'embedded')
    test("when the server ends a write's session, then the write fails, and the pool's one connection is made again for the next", async () => {
      const sql = open();
      try {
        await expect(writeTransaction(sql, (tx) => tx`SELECT pg_terminate_backend(pg_backend_pid())`, control())).rejects.toMatchObject({
          code: expect.stringMatching(/^(57P01|CONNECTION_CLOSED|CONNECTION_ENDED)$/),
        });
        const rows = await writeTransaction(sql, (tx) => tx`INSERT INTO marks VALUES ('reconnected') RETURNING v`, control());
        expect(rows.map((r) => r.v)).toEqual(['reconnected']);
        expect(await sql`SELECT 1 AS one`).toEqual([{ one: 1 }]);
      } finally {
        await sql.end({ timeout: 1 });
      }
    });

  // A reserved connection's statements wait in the reserve's own queue while one is described (a new
  // connection prepares each statement first): postgres.js dropped that queue when the connection
  // closed, and what waited there never settled (a group commit's other writes: patches/README.md).
  if (process.env.TEST_DB_MODE !== 'embedded')
    test('when the session ends while statements wait behind one being described, then every one of them fails, none hangs', async () => {
      const sql = open();
      try {
        const tx = await sql.reserve();
        // A parameter on a statement not prepared yet: described first, so the ones behind it wait.
        const first = tx`SELECT pg_terminate_backend(pg_backend_pid()) AND ${true}::boolean AS ended`.execute();
        const behind = [tx`SELECT ${1}::int AS n`.execute(), tx`SELECT ${2}::int AS n`.execute()];
        let timer: NodeJS.Timeout | undefined;
        const settled = await Promise.race([
          Promise.allSettled([first, ...behind]),
          new Promise<'pending'>((resolve) => (timer = setTimeout(() => resolve('pending'), 5_000))),
        ]);
        clearTimeout(timer);
        expect(settled).not.toBe('pending');
        const reasons = (settled as PromiseSettledResult<unknown>[]).map((o) =>
          o.status === 'rejected' ? (o.reason as { code?: string }).code : 'ran',
        );
        expect(reasons.slice(1)).toEqual(['CONNECTION_CLOSED', 'CONNECTION_CLOSED']);
        tx.release();
        expect(await sql`SELECT 1 AS one`).toEqual([{ one: 1 }]);
      } finally {
        await sql.end({ timeout: 1 });
      }
    });

  // The same queue of sql.begin (transaction(): the keys' and the migrations' transactions).
  if (process.env.TEST_DB_MODE !== 'embedded')
    test('when the session of a transaction ends while statements wait behind one being described, then the transaction fails, none hangs', async () => {
      const sql = open();
      try {
        let behind: Promise<unknown>[] = [];
        const begun = transaction(sql, async (tx) => {
          const first = tx`SELECT pg_terminate_backend(pg_backend_pid()) AND ${true}::boolean AS ended`.execute();
          behind = [tx`SELECT ${1}::int AS n`.execute(), tx`SELECT ${2}::int AS n`.execute()];
          return Promise.all([first, ...behind]);
        });
        let timer: NodeJS.Timeout | undefined;
        const settled = await Promise.race([
          Promise.allSettled([begun]).then(() => Promise.allSettled(behind)),
          new Promise<'pending'>((resolve) => (timer = setTimeout(() => resolve('pending'), 5_000))),
        ]);
        clearTimeout(timer);
        expect(settled).not.toBe('pending');
        await expect(begun).rejects.toBeDefined();
        expect((settled as PromiseSettledResult<unknown>[]).map((o) => o.status)).toEqual(['rejected', 'rejected']);
        expect(await sql`SELECT 1 AS one`).toEqual([{ one: 1 }]);
      } finally {
        await sql.end({ timeout: 1 });
      }
    });
});
