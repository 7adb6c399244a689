import { type Sql, connect } from '../../../src/store/database/db';
import { DeadlineExceededError } from '../../../src/store/errors';
import { createGroupCommitter } from '../../../src/store/write/groupCommit';
import type { WriteControl, WriteSql } from '../../../src/store/write/transaction';
import { type TestDatabase, freshDatabase } from '../../support/databases';
import { proxyTo } from '../../support/proxy';

/*
 * Creates that arrive together share one transaction (src/store/write/groupCommit.ts). Each keeps what a
 * transaction of its own promised: its own result, its own error, nothing committed once it was
 * abandoned, and nothing written twice when its group is rolled back for another's sake.
 */
describe('writes that arrive together share a transaction (createGroupCommitter)', () => {
  let db: TestDatabase;
  let sql: Sql;
  beforeAll(async () => {
    db = await freshDatabase();
    sql = connect(db.url, { max: 3 });
    await sql`CREATE TABLE IF NOT EXISTS marks (v text NOT NULL)`;
  });
  afterAll(async () => {
    await sql.end();
    await db.drop();
  });

  interface Mark {
    v: string;
    xid: string;
  }
  const insert = (tx: WriteSql, v: string) =>
    tx<Mark[]>`INSERT INTO marks VALUES (${v}) RETURNING v, pg_current_xact_id()::text AS xid`.then(([row]) => row as Mark);
  /** How many rows hold each value, for the values that start with `prefix`. */
  const stored = async (prefix: string) =>
    Object.fromEntries(
      (await sql<{ v: string; n: number }[]>`SELECT v, count(*)::int AS n FROM marks WHERE v LIKE ${`${prefix}%`} GROUP BY v`).map((r) => [
        r.v,
        r.n,
      ]),
    );
  const names = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}-${String(i).padStart(2, '0')}`);
  /** `work`'s outcome, or 'pending' when it has not settled within 5 s: a write that hangs fails its test at once, named. */
  const unlessHung = async <T>(work: Promise<T>): Promise<T | 'pending'> => {
    let timer: NodeJS.Timeout | undefined;
    try {
      return await Promise.race([work, new Promise<'pending'>((resolve) => (timer = setTimeout(() => resolve('pending'), 5_000)))]);
    } finally {
      clearTimeout(timer);
    }
  };
  const control = <R>(abandoned: () => boolean = () => false): WriteControl<R> & { committed: R[] } => {
    const committed: R[] = [];
    return { abandoned, committing: (r) => void committed.push(r), committed };
  };

  test('when 70 writes come at once, then each gets its own row back, all commit, in two transactions: 64 writes and 6', async () => {
    const group = createGroupCommitter(sql);
    const values = names('together', 70);
    const rows = await Promise.all(values.map((v) => group.transact((tx) => insert(tx, v), control<Mark>())));
    expect(rows.map((r) => r.v)).toEqual(values);
    expect(await stored('together')).toEqual(Object.fromEntries(values.map((v) => [v, 1])));
    // All came while the first connection was being reserved; a group holds GROUP_MEMBERS (64) at most.
    const sizes = new Map<string, number>();
    for (const { xid } of rows) sizes.set(xid, (sizes.get(xid) ?? 0) + 1);
    expect([...sizes.values()]).toEqual([64, 6]);
  });

  test("when one write's statement fails, then it gets its error, and every other write of its group commits once", async () => {
    const group = createGroupCommitter(sql);
    const values = names('beside', 12);
    const outcomes = await Promise.allSettled(
      values.map((v, i) =>
        group.transact(async (tx) => {
          if (i === 5) await tx`SELECT 1 / 0`;
          return insert(tx, v);
        }, control<Mark>()),
      ),
    );
    expect(outcomes[5]).toMatchObject({
      status: 'rejected',
      reason: expect.objectContaining({ message: expect.stringMatching(/division by zero/) }),
    });
    const others = values.filter((_, i) => i !== 5);
    expect(outcomes.filter((o) => o.status === 'fulfilled').map((o) => o.value.v)).toEqual(others);
    expect(await stored('beside')).toEqual(Object.fromEntries(others.map((v) => [v, 1])));
  });

  test("when a write's group fails for another's sake a third time, then it is answered DeadlineExceededError and never committed", async () => {
    const group = createGroupCommitter(sql);
    let tries = 0;
    // Its second statement is sent once its first is answered: behind the failing ones, so it fails as theirs did (25P02).
    const victim = group.transact(async (tx) => {
      tries += 1;
      const row = await insert(tx, `victim-${tries}`);
      await tx`SELECT 1 AS one`;
      return row;
    }, control<Mark>());
    // Each fails on its own statement in its turn; the ones behind it in the same group go back to the queue with the victim.
    const failing = [1, 2, 3].map(() => group.transact((tx) => tx`SELECT 1 / 0`, control<unknown>()));
    const outcomes = await Promise.allSettled([victim, ...failing]);
    expect(outcomes[0]).toMatchObject({ status: 'rejected', reason: expect.any(DeadlineExceededError) });
    expect(outcomes.slice(1).map((o) => (o.status === 'rejected' ? (o.reason as Error).message : 'committed'))).toEqual([
      'division by zero',
      'division by zero',
      'division by zero',
    ]);
    // Three groups: sent back twice (REQUEUES), then answered; none of its rows committed.
    expect(tries).toBe(3);
    expect(await stored('victim')).toEqual({});
  });

  test('when a write is abandoned after its statement ran, then it fails with DeadlineExceededError, its row is never committed, and the others commit once, later', async () => {
    const group = createGroupCommitter(sql);
    const values = names('abandoned', 8);
    let ranIn: string | undefined;
    const controls = values.map((_, i) => control<Mark>(i === 3 ? () => ranIn !== undefined : undefined));
    const outcomes = await Promise.allSettled(
      values.map((v, i) =>
        group.transact(async (tx) => {
          const row = await insert(tx, v);
          if (i === 3) ranIn = row.xid;
          return row;
        }, controls[i] as WriteControl<Mark>),
      ),
    );
    expect(outcomes[3]).toMatchObject({ status: 'rejected', reason: expect.any(DeadlineExceededError) });
    expect(controls[3]?.committed).toEqual([]);
    const others = values.filter((_, i) => i !== 3);
    expect(await stored('abandoned')).toEqual(Object.fromEntries(others.map((v) => [v, 1])));
    // The others ran again, in a transaction after the one rolled back with the abandoned write.
    const fulfilled = outcomes.flatMap((o) => (o.status === 'fulfilled' ? [o.value] : []));
    expect(fulfilled.map((r) => r.v)).toEqual(others);
    expect(ranIn).toEqual(expect.any(String));
    expect(fulfilled.filter((r) => r.xid === ranIn)).toEqual([]);
  });

  test('when no connection can be had, then every write waiting fails with the connection error, and none is sent', async () => {
    // Port 1: nothing listens there, so the pool's connection is refused at once.
    const unreachable = connect('postgres://postgres@127.0.0.1:1/none', { max: 1 });
    try {
      const group = createGroupCommitter(unreachable);
      let sent = 0;
      const outcomes = await Promise.allSettled(
        names('unreachable', 3).map((v) => group.transact((tx) => ((sent += 1), insert(tx, v)), control<Mark>())),
      );
      expect(outcomes).toEqual(Array(3).fill({ status: 'rejected', reason: expect.objectContaining({ code: 'ECONNREFUSED' }) }));
      expect(sent).toBe(0);
    } finally {
      await unreachable.end();
    }
  });

  test('when a write is abandoned before its group begins, then its statement is never sent', async () => {
    const group = createGroupCommitter(sql);
    let sent = 0;
    const abandoned = control<Mark>(() => true);
    await expect(group.transact((tx) => ((sent += 1), insert(tx, 'never')), abandoned)).rejects.toThrow(DeadlineExceededError);
    expect(sent).toBe(0);
    expect(await stored('never')).toEqual({});
  });

  // The embedded PostgreSQL serves every connection from one session, which pg_terminate_backend does not end.
  if (process.env.TEST_DB_MODE !== 'embedded')
    test("when the group's connection is lost before its COMMIT, then the write whose statement met it fails, none of that transaction is committed, and the others commit once, later", async () => {
      const group = createGroupCommitter(sql);
      const values = names('lost', 6);
      let lostIn: string | undefined;
      const outcomes = await Promise.allSettled(
        values.map((v, i) =>
          group.transact(async (tx) => {
            const row = await insert(tx, v);
            if (i === 5) {
              lostIn = row.xid;
              await tx`SELECT pg_terminate_backend(pg_backend_pid())`;
            }
            return row;
          }, control<Mark>()),
        ),
      );
      // The six were one group, ended by its own session's end before its COMMIT was sent.
      expect(outcomes[5]).toMatchObject({ status: 'rejected', reason: expect.objectContaining({ code: 'CONNECTION_CLOSED' }) });
      const others = values.slice(0, 5);
      const fulfilled = outcomes.flatMap((o) => (o.status === 'fulfilled' ? [o.value] : []));
      expect(fulfilled.map((r) => r.v)).toEqual(others);
      expect(lostIn).toEqual(expect.any(String));
      expect(fulfilled.filter((r) => r.xid === lostIn)).toEqual([]);
      expect(await stored('lost')).toEqual(Object.fromEntries(others.map((v) => [v, 1])));
      const after = await group.transact((tx) => insert(tx, 'lost-after'), control<Mark>());
      expect(after.v).toBe('lost-after');
    });

  // On a new connection each statement is described before it runs, and the group's other statements wait
  // behind it in the reserved connection's queue: they failed to settle when the session ended (patches/README.md).
  if (process.env.TEST_DB_MODE !== 'embedded')
    test("when a new connection's session ends while the group's statements wait behind the first, then every write fails, none hangs, none is stored", async () => {
      const fresh = connect(db.url, { max: 1 });
      try {
        const group = createGroupCommitter(fresh);
        const values = names('cut', 5);
        const writes = values.map((v, i) =>
          group.transact(
            (tx) =>
              i === 0
                ? tx`SELECT pg_terminate_backend(pg_backend_pid()) AND ${true}::boolean AS ended`.then(() => insert(tx, v))
                : insert(tx, v),
            control<Mark>(),
          ),
        );
        const outcomes = await unlessHung(Promise.allSettled(writes));
        expect(outcomes).not.toBe('pending');
        expect((outcomes as PromiseSettledResult<Mark>[]).map((o) => o.status)).toEqual(values.map(() => 'rejected'));
        expect(await stored('cut')).toEqual({});
        const after = await group.transact((tx) => insert(tx, 'cut-after'), control<Mark>());
        expect(after.v).toBe('cut-after');
      } finally {
        await fresh.end({ timeout: 1 });
      }
    });

  /** Resolves once a statement whose text holds `marker` is running on the server (pg_stat_activity, read on the test's own pool). */
  const running = async (marker: string) => {
    while ((await sql`SELECT 1 FROM pg_stat_activity WHERE query LIKE ${`%${marker}%`} AND pid <> pg_backend_pid()`).length === 0)
      await new Promise((resolve) => setTimeout(resolve, 10));
  };

  // A reset connection (the server's host gone) errors before it closes: the group's ROLLBACK, sent as its writes'
  // failure was handled, went out in between and never settled (patches/README.md, postgres.js part 019), which held
  // the group's slot and, on this pool of one, its only connection for good: creates never came back after a failover.
  if (process.env.TEST_DB_MODE !== 'embedded')
    test("when the group's connection is reset while its statements run, then its writes fail, none hangs, and the next commits on the pool of one", async () => {
      const proxy = await proxyTo(db.url);
      const fresh = connect(proxy.url, { max: 1 });
      try {
        const group = createGroupCommitter(fresh);
        await group.transact((tx) => insert(tx, 'reset-before'), control<Mark>());
        const values = names('reset', 4);
        const writes = values.map((v, i) =>
          group.transact(async (tx) => {
            if (i === 0) await tx`SELECT pg_sleep(5), 'reset-marker' AS marker`;
            return insert(tx, v);
          }, control<Mark>()),
        );
        await running('reset-marker');
        proxy.resetAll();
        const outcomes = await unlessHung(Promise.allSettled(writes));
        expect(outcomes).not.toBe('pending');
        // The write whose statement met the reset fails; the others, in its group or in the next, fail or commit.
        const settledAs = outcomes as PromiseSettledResult<Mark>[];
        expect(settledAs[0]).toMatchObject({ status: 'rejected', reason: expect.objectContaining({ code: 'ECONNRESET' }) });
        const committed = settledAs.flatMap((o) => (o.status === 'fulfilled' ? [o.value.v] : []));
        const after = await unlessHung(group.transact((tx) => insert(tx, 'reset-after'), control<Mark>()));
        expect(after).toMatchObject({ v: 'reset-after' });
        expect(await stored('reset')).toEqual(Object.fromEntries(['reset-before', ...committed, 'reset-after'].map((v) => [v, 1])));
      } finally {
        await fresh.end({ timeout: 1 });
        proxy.close();
      }
    });

  // A connection kept open by a server that never answers holds its group's slot; by the bound every member has been
  // answered (commitWithin's deadline, grace and resolution), and the slot goes to the next group.
  if (process.env.TEST_DB_MODE !== 'embedded')
    test('when both groups wait on connections that never answer, then past the slot bound a new write commits, and the stall is told', async () => {
      const proxy = await proxyTo(db.url);
      const fresh = connect(proxy.url, { max: 3 });
      const stalls: string[] = [];
      try {
        const group = createGroupCommitter(fresh, { slotBoundMs: 300, stalled: (what) => void stalls.push(what) });
        // Two groups, each on its own connection, each held in its statement; then their connections stop answering.
        const hold = async (v: string) => {
          const write = group.transact(async (tx) => {
            await tx.unsafe(`SELECT pg_sleep(1), '${v}-marker' AS marker`);
            return insert(tx, v);
          }, control<Mark>());
          write.catch(() => {});
          await running(`${v}-marker`);
        };
        await hold('stall-a');
        await hold('stall-b');
        proxy.freezeExisting();
        const after = await group.transact((tx) => insert(tx, 'stall-after'), control<Mark>());
        expect(after.v).toBe('stall-after');
        // At least one of the two slots was given on (the write needed one), each told as a group's.
        expect(stalls.length).toBeGreaterThan(0);
        expect(new Set(stalls)).toEqual(new Set(['group']));
      } finally {
        proxy.close();
        await fresh.end({ timeout: 0 });
      }
    });
});
