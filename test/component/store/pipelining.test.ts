import { connect as tcpConnect } from 'node:net';
import { type Sql, connect, withDeadline } from '../../../src/store/database/db';
import { DeadlineExceededError } from '../../../src/store/errors';
import { type TestDatabase, freshDatabase } from '../../support/databases';

// postgres.js sends a query on a busy connection without waiting (pipelining), so several of a
// connection's queries are in flight at once and each answer is read for the oldest of them. Two
// faults of that reading gave a query another one's answer, a wrong answer nobody could detect
// (patches/README.md, postgres): a query cancelled by its deadline while it waited in the pipeline,
// and a query whose error came after some of its rows.
describe('a connection with several queries in flight', () => {
  let db: TestDatabase;
  let sql: Sql;
  beforeAll(async () => {
    db = await freshDatabase();
    // One connection, open before the tests: every query below is sent on it at once, in one pipeline.
    sql = connect(db.url, { max: 1 });
    await sql`SELECT 1`;
  });
  afterAll(async () => {
    await sql.end({ timeout: 1 });
    await db.drop();
  });

  // The embedded PGlite ignores a cancel request (the query runs to its end); since the pglite-socket
  // patch (patches/README.md) it closes the cancel request's connection, as PostgreSQL does, and the
  // case runs there too: before, that connection held one of the worker's 4 for the rest of the run.
  test('when a query sent behind a slow one passes its deadline, then it fails as late and the queries after it get their own answers', async () => {
    for (let round = 0; round < 3; round++) {
      // A query is sent when first awaited, or asked to (execute()): these four go in this order.
      const slow = sql`SELECT pg_sleep(0.4) AS slept`.execute();
      // Behind the slow query; its deadline passes while it waits there. withDeadline is given this
      // test's own promise of its answer, whose cancel is the query's, so that the round can wait for
      // the cancel request that is sent once the query is the one running.
      const lateQuery = sql`SELECT 2 AS n, pg_sleep(0.3) AS slept`.execute();
      let cancelling: Promise<void> | undefined;
      const tracked = Object.assign(
        lateQuery.then((rows) => rows),
        { cancel: () => (cancelling = lateQuery.cancel()) },
      );
      const late = withDeadline(tracked, Date.now() + 100).catch((err: unknown) => err);
      const after = sql<{ n: number }[]>`SELECT 3 AS n`.execute();
      const last = sql<{ n: number }[]>`SELECT ${round} :: int AS n`.execute();
      await slow;
      expect(await late).toBeInstanceOf(DeadlineExceededError);
      expect([...(await after)]).toEqual([{ n: 3 }]);
      expect([...(await last)]).toEqual([{ n: round }]);
      // A cancel request cancels whatever its backend runs when it arrives. The next round waits until
      // the server has closed this one's connection, which it does once the request is handled (as
      // libpq's PQcancel waits): CI's first pass, its server under load, handled one so late that it
      // cancelled the next round's first query instead.
      expect(cancelling).toBeInstanceOf(Promise);
      await cancelling;
    }
  });

  test('when a cancel request is sent, then the server closes its connection at once, as PostgreSQL does', async () => {
    const { hostname, port } = new URL(db.url);
    for (let i = 0; i < 6; i++) {
      const socket = tcpConnect(Number(port), hostname);
      // CancelRequest: its length, the code 80877102, and a process id and secret that match no query.
      const request = Buffer.alloc(16);
      request.writeInt32BE(16, 0);
      request.writeInt32BE(80877102, 4);
      request.writeInt32BE(i + 1, 8);
      request.writeInt32BE(42, 12);
      socket.on('connect', () => socket.write(request));
      // Nothing comes back (a server that refuses the connection says why, as pglite-socket's "Too many connections").
      let answer = '';
      socket.on('data', (chunk: Buffer) => (answer += chunk.toString('latin1')));
      // The server closes it once it has read the request (waited for: the test's timeout bounds it).
      const closed = await new Promise<boolean>((resolve) => {
        socket.on('close', () => resolve(true));
        socket.on('error', () => {});
      });
      socket.destroy();
      expect({ closed, answer }).toEqual({ closed: true, answer: '' });
    }
    // Each cancel request's connection is gone: a pool of 3 (with this file's, 4: what a worker's embedded server takes) opens its connections and runs a query on each.
    const three = connect(db.url, { max: 3 });
    try {
      const answers = await Promise.all([1, 2, 3].map((n) => three.begin((tx) => tx`SELECT ${n}::int AS n, pg_sleep(0.05)`)));
      expect(answers.map(([row]) => row?.n)).toEqual([1, 2, 3]);
    } finally {
      await three.end({ timeout: 1 });
    }
  });

  test('when a query fails after some of its rows came, then the next query in the pipeline gets its rows alone, without holes', async () => {
    const failing = sql`SELECT i, 1 / (4 - i) AS boom FROM generate_series(1, 10) AS i`.execute().catch((err: Error) => err);
    const next = sql<{ x: number }[]>`SELECT x FROM generate_series(1, 5) AS x`.execute();
    expect(await failing).toMatchObject({ code: '22012' });
    const rows = await next;
    expect(rows).toHaveLength(5);
    expect([...rows]).toEqual([1, 2, 3, 4, 5].map((x) => ({ x })));
  });
});
