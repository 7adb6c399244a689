import postgres from 'postgres';
import { type WriteTransaction, committedAfterAll } from '../../../src/store/write/commit';
import { connect, withDeadline } from '../../../src/store/database/db';
import { CommitOutcomeUnknownError, DeadlineExceededError, isDatabaseUnavailable } from '../../../src/store/errors';
import { call, waitFor } from '../../support/load';
import { reapAll, startServer, stop } from '../../support/processes';
import { type ThrowawayPostgres, createThrowawayPostgres, describeWithThrowawayPostgres } from '../../support/throwawayPostgres';

/*
 * What the service's pool does with several hosts and target_session_attrs, on a primary and its
 * hot standby of our own (patches/README.md, postgres.js parts 005, 008 and 009): `read-write` as libpq
 * reads it (a hot standby never qualifies, whatever default_transaction_read_only says), and a
 * connection whose server refuses a write as read-only (25006) dropped, so that the next one asks
 * each host again. Without the patch the pool's connections stay on the standby and every write fails.
 * While no host qualifies (part 022), a query fails at once and each connection backs off before it asks
 * again; without that part the pool's connections opened sessions on the standby without pause.
 */
describeWithThrowawayPostgres('a pool that follows the primary (target_session_attrs)', () => {
  let primary: ThrowawayPostgres;
  let standby: ThrowawayPostgres;
  beforeAll(async () => {
    primary = await createThrowawayPostgres();
    await primary.start();
    standby = await createThrowawayPostgres({ replicaOf: primary });
    await standby.start();
    await primary.psql('CREATE TABLE written (n int)');
    await primary.psql('CREATE TABLE created (id bigserial PRIMARY KEY, created_at timestamptz NOT NULL DEFAULT now())');
  }, 120_000);
  afterAll(async () => {
    reapAll();
    await standby?.destroy();
    await primary?.destroy();
  }, 60_000);

  /** Both servers, the standby listed first. */
  const bothHosts = (attrs: string) =>
    `postgres://postgres@127.0.0.1:${standby.port},127.0.0.1:${primary.port}/postgres?target_session_attrs=${attrs}`;

  test.each(['read-write', 'primary'])(
    'when the standby is listed first and target_session_attrs=%s, then every connection of the pool is on the primary and writes',
    async (attrs) => {
      const sql = connect(bothHosts(attrs), { max: 4 });
      try {
        const sessions = await Promise.all(
          Array.from(
            { length: 8 },
            () => sql<{ port: number; recovery: boolean }[]>`SELECT inet_server_port() AS port, pg_is_in_recovery() AS recovery`,
          ),
        );
        expect(new Set(sessions.map(([s]) => `${s!.port} ${s!.recovery}`))).toEqual(new Set([`${primary.port} false`]));
        await sql`INSERT INTO written VALUES (1)`;
      } finally {
        await sql.end();
      }
    },
  );

  test('when a server refuses a write as read-only (25006), then the error reads as unavailable and the connection is replaced by a new one', async () => {
    const sql = connect(bothHosts('primary'), { max: 1 });
    try {
      const [before] = await sql<{ pid: number }[]>`SELECT pg_backend_pid() AS pid`;
      // The session turns read-only, as a demoted server's do.
      await sql`SET default_transaction_read_only = on`;
      const refused = await sql`INSERT INTO written VALUES (2)`.catch((err: unknown) => err);
      expect(refused).toBeInstanceOf(postgres.PostgresError);
      expect((refused as postgres.PostgresError).code).toBe('25006');
      expect(isDatabaseUnavailable(refused)).toBe(true);
      const [after] = await sql<
        { pid: number; readOnly: string }[]
      >`SELECT pg_backend_pid() AS pid, current_setting('default_transaction_read_only') AS "readOnly"`;
      expect(after!.pid).not.toBe(before!.pid);
      expect(after!.readOnly).toBe('off');
      await sql`INSERT INTO written VALUES (3)`;
    } finally {
      await sql.end();
    }
  });

  /**
   * A create whose COMMIT's answer was lost asks what became of its transaction (committedAfterAll). Behind a
   * transaction-mode pooler fronting a demoted server, a pool connection reaches a standby: one that has not
   * replayed the transaction yet calls its id "in the future", which reads on a primary as "never committed".
   */
  test("when a committed transaction's outcome is asked of a standby that has not replayed it, then no verdict comes from the standby, and the primary says committed", async () => {
    await standby.psql('SELECT pg_wal_replay_pause()');
    const onPrimary = connect(primary.url, { max: 1 });
    const onStandby = connect(standby.url, { max: 1 });
    try {
      const [row] = await onPrimary.begin(
        (tx) => tx<{ id: string; createdAt: string; xid: string; pid: number }[]>`
          INSERT INTO created DEFAULT VALUES
          RETURNING id, created_at::text AS "createdAt", pg_current_xact_id()::text AS xid, pg_backend_pid() AS pid`,
      );
      const wrote: WriteTransaction = { xid: row!.xid, pid: row!.pid, row: { table: 'created', id: row!.id, createdAt: row!.createdAt } };
      const [{ recovering }] = (await onStandby`SELECT pg_is_in_recovery() AS recovering`) as unknown as [{ recovering: boolean }];
      expect(recovering).toBe(true);
      const asked = await committedAfterAll(onStandby, wrote, new Error('lost'), 1_500).catch((err: unknown) => err);
      expect(asked).toBeInstanceOf(CommitOutcomeUnknownError);
      expect(await committedAfterAll(onPrimary, wrote, new Error('lost'), 1_500)).toBe(true);
    } finally {
      await standby.psql('SELECT pg_wal_replay_resume()');
      await onStandby.end();
      await onPrimary.end();
    }
  });

  test('when the service starts on DATABASE_URL naming only the standby, then /readyz says database_failover and the log says no server takes writes', async () => {
    const server = await startServer({
      DATABASE_URL: `postgres://postgres@127.0.0.1:${standby.port}/postgres?target_session_attrs=primary`,
      API_KEYS: 'tsa-key-0123456789abcdef',
    });
    try {
      await waitFor(async () => (await call(`${server.origin}/readyz`)).status === 503 && server.output().includes('TARGET_SESSION_ATTRS'));
      expect((await call(`${server.origin}/readyz`)).body).toEqual({
        code: 'service_unavailable',
        message: 'Not ready: database_failover',
        status: 503,
      });
      expect(server.output()).toContain('no server of DATABASE_URL takes writes now');
    } finally {
      await stop(server);
    }
  });

  // Last: it stops the primary (started again at its end).
  test('when no host takes writes (the primary stopped, the standby in recovery), then each query fails at once as unavailable, and each connection asks the standby about once a second', async () => {
    const sessions = async () => Number(await standby.psql("SELECT sessions FROM pg_stat_database WHERE datname = 'postgres'"));
    const sql = connect(bothHosts('primary'), { max: 4 });
    await primary.stop('immediate');
    try {
      const before = await sessions();
      // Eight callers, for 3 s, each asking again 50 ms after its answer; a query given 3 s would wait them out.
      const failures: unknown[] = [];
      let answered = 0;
      const until = Date.now() + 3_000;
      await Promise.all(
        Array.from({ length: 8 }, async () => {
          while (Date.now() < until) {
            await withDeadline(sql`SELECT 1`, Date.now() + 3_000).then(
              () => (answered += 1),
              (err: unknown) => failures.push(err),
            );
            await new Promise((r) => setTimeout(r, 50));
          }
        }),
      );
      const opened = (await sessions()) - before;
      expect(answered).toBe(0);
      expect(failures.every((err) => isDatabaseUnavailable(err) && !(err instanceof DeadlineExceededError))).toBe(true);
      expect(failures.length).toBeGreaterThanOrEqual(8);
      // 4 connections for 3 s, their backoff growing to 1 s: a few sessions each (without part 022: about 35 a second each).
      expect(opened).toBeLessThanOrEqual(40);
    } finally {
      await sql.end();
      await primary.start();
    }
  });
});
