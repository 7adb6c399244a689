import { type Sql, connect, transaction, withDeadline } from '../../../src/store/database/db';
import { DeadlineExceededError } from '../../../src/store/errors';
import { type PgBouncer, pgbouncerUnavailable, startPgBouncer } from '../../support/pgbouncer';

// Behind PgBouncer in transaction mode (Debian's 1.18, as shipped), a pool's connection must not send a statement
// while another one's answer has yet to come. PgBouncer gives the server connection back at the first statement's
// ReadyForQuery; the answer to the statement behind it then arrives on a server connection no client is linked to
// ("got packet '1' from server when not linked", "idle server got dirty"), and is dropped. The statement waits
// forever, on a connection the pool counts as busy: in the soak's hour, one worker's five connections waited so, and
// it answered every request needing the database with 503 until it was restarted.

const why = pgbouncerUnavailable();
const realPostgres = process.env.DATABASE_URL !== undefined;
if (why && process.env.REQUIRE_THROWAWAY_POSTGRES === '1') throw new Error(`the pooler tests need PgBouncer: ${why}`);

(why || !realPostgres ? describe.skip : describe)(
  `a pool behind PgBouncer in transaction mode, its statements sent all at once${why ? ` (skipped: ${why})` : ''}`,
  () => {
    let bouncer: PgBouncer;
    let sql: Sql;
    beforeAll(async () => {
      bouncer = await startPgBouncer(Number(new URL(process.env.DATABASE_URL as string).port || 5432), 'transaction', 4);
    }, 30_000);
    afterAll(async () => {
      await sql?.end({ timeout: 1 });
      await bouncer?.stop();
    });

    test('when statements with parameters and without are sent at once on a pool of 2, then every one is answered with its own row', async () => {
      sql = connect(bouncer.url, { max: 2, poolMode: 'transaction' });
      // Without parameters a statement is sent whole (Parse to Sync); with them, its Parse and Describe leave first
      // and its Bind once the description is back: the second kind sent behind the first is the one dropped.
      const answers = await Promise.allSettled(
        Array.from({ length: 400 }, (_, i) =>
          withDeadline(i % 2 === 0 ? sql<{ n: number }[]>`SELECT ${i}::int AS n` : sql<{ n: number }[]>`SELECT 1 AS n`).then(
            (rows) => rows[0]?.n,
          ),
        ),
      );
      const late = answers.filter((a) => a.status === 'rejected' && a.reason instanceof DeadlineExceededError).length;
      expect({ late, failed: answers.filter((a) => a.status === 'rejected').length }).toEqual({ late: 0, failed: 0 });
      expect(answers.map((a) => (a.status === 'fulfilled' ? a.value : undefined))).toEqual(
        Array.from({ length: 400 }, (_, i) => (i % 2 === 0 ? i : 1)),
      );
    }, 30_000);

    test('when transactions run on that pool at once, then each runs on its connection (no UNSAFE_TRANSACTION) and answers its own', async () => {
      // sql.begin reserves its connection from the hook its BEGIN runs (onexecute), which postgres.js skipped when
      // the connection could take no more statements: with one statement at a time, always (patches/README.md).
      const sums = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          transaction(sql, async (tx) => {
            const [a] = await tx<{ n: number }[]>`SELECT ${i}::int AS n`;
            const [b] = await tx<{ n: number }[]>`SELECT ${i * 10}::int AS n`;
            return (a?.n ?? 0) + (b?.n ?? 0);
          }),
        ),
      );
      expect(sums).toEqual(Array.from({ length: 20 }, (_, i) => i * 11));
    });

    test("when a reserved connection's BEGIN is in flight, then the statement after it is sent without waiting for its answer", async () => {
      // A create's two round trips (writeTransaction: BEGIN leaves with its INSERT) stay two behind the pooler: in
      // a transaction the pooler keeps the server linked, so a reserved connection's statements are not held back.
      // Each statement as it is sent, with whether BEGIN was still waiting for its answer then (postgres.js marks a
      // query inactive as its answer is read, before any promise callback runs).
      const sent: [string, boolean][] = [];
      let begin: { active?: boolean } | undefined;
      const pool = connect(bouncer.url, {
        max: 1,
        poolMode: 'transaction',
        statements: (_c, text) => void sent.push([text, begin?.active === true]),
      });
      try {
        const tx = await pool.reserve();
        const begun = tx.unsafe('BEGIN').execute();
        begin = begun as unknown as { active?: boolean };
        const [rows] = await Promise.all([tx<{ n: number }[]>`SELECT ${7}::int AS n`, begun]);
        expect(sent.map(([text]) => text)).toEqual(['BEGIN', 'SELECT $1::int AS n']);
        expect(sent[1]?.[1]).toBe(true);
        expect(rows[0]?.n).toBe(7);
        await tx`ROLLBACK`;
        tx.release();
      } finally {
        await pool.end({ timeout: 1 });
      }
    });
  },
);
