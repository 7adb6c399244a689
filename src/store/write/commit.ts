import postgres from 'postgres';
import { type Sql, asUnavailable, counted, onlyRow, withDeadline } from '../database/db';
import { type Deadline, requestDeadline } from '../database/deadline';
import { CommitOutcomeUnknownError, DatabaseUnavailableError, DeadlineExceededError, isDatabaseUnavailable } from '../errors';
import { type WriteControl, type WriteSql, writeTransaction } from './transaction';

/**
 * The transaction a write ran in, as PostgreSQL names it: enough to learn later whether it
 * committed (pg_xact_status) and to end its session if it is still open. `writeColumns` returns it.
 */
export interface WriteTransaction {
  /** pg_current_xact_id(), as text. */
  xid: string;
  /** pg_backend_pid() of the session that ran it. */
  pid: number;
  /**
   * A row it inserted, by id and created_at (as text): the proof that it committed. After a
   * crash PostgreSQL hands out again the transaction ids (and sequence values) of transactions
   * none of whose WAL reached the disk, so pg_xact_status can say "committed" of another
   * transaction with our id: the row, with our xid as its xmin and our created_at, cannot.
   */
  row: { table: string; id: number | string; createdAt: string };
}

/** The columns a write's RETURNING adds so that its transaction can be found again: `xid` and `pid`. */
export const writeColumns = (q: Sql) => q`pg_current_xact_id()::text AS xid, pg_backend_pid() AS pid`;

/**
 * How long a COMMIT sent before the deadline is waited for past it, and then how long its outcome
 * is looked for (by default: a pool that follows a primary across a failover waits for the
 * promoted one, DATABASE_FAILOVER_TIMEOUT_MS).
 */
export const COMMIT_GRACE_MS = 5_000;
export const RESOLVE_MS = 5_000;

/**
 * A write within `deadline` whose answer is the truth: a transaction that has not sent its
 * COMMIT when the deadline passes is abandoned (DeadlineExceededError now, a 503; it never
 * commits: when its statement returns, it rolls back), and one whose COMMIT is on its way is
 * waited for, for up to COMMIT_GRACE_MS more, so that its outcome is the answer. When that
 * outcome cannot be had (the connection failed, or no answer came), PostgreSQL is asked what
 * became of the transaction (pg_xact_status, after ending its session if it is still open):
 * committed, the result; rolled back, DeadlineExceededError; still unknown after `resolveMs`
 * (RESOLVE_MS unless given), CommitOutcomeUnknownError (a 500, which promises nothing). After a
 * failover the promoted server holds every committed transaction of the old one (replication is
 * synchronous), so it is the one asked; an answer from a standby is not believed (fromThePrimary).
 *
 * `body` runs the statements and returns the result with the transaction that wrote it (from
 * `writeColumns`), or no transaction when it wrote nothing (a replayed create: its lost COMMIT
 * answer is a 503, as nothing of it is to keep). `transact` runs it: by default in a transaction
 * of its own (writeTransaction); a GroupCommitter's `transact` runs it in a group's.
 */
export async function commitWithin<T>(
  sql: Sql,
  deadline: Deadline = requestDeadline(),
  body: (tx: WriteSql) => Promise<{ result: T; wrote?: WriteTransaction }>,
  {
    resolveMs = RESOLVE_MS,
    transact = (b, control) => writeTransaction(sql, b, control),
  }: CommitOptions<{ result: T; wrote?: WriteTransaction }> = {},
): Promise<T> {
  if (deadline - Date.now() <= 0) throw new DeadlineExceededError();
  // Set by the transaction and by the timer, read by both: one object, so that neither's view is narrowed.
  const state: { phase: 'running' | 'committing' | 'abandoned'; done?: { result: T; wrote?: WriteTransaction } } = { phase: 'running' };
  const tx = transact(body, {
    // Answered 503 while this ran: never begin, or roll back; never commit after the answer.
    abandoned: () => state.phase === 'abandoned',
    committing: (out) => {
      state.phase = 'committing';
      state.done = out;
    },
  }).then((out) => out.result);
  // An abandoned transaction's end is nobody's answer.
  tx.catch(() => {});
  const timers: NodeJS.Timeout[] = [];
  try {
    return await counted(
      () =>
        new Promise<T>((resolve, reject) => {
          tx.then(resolve, reject);
          timers.push(
            setTimeout(() => {
              if (state.phase === 'running') {
                state.phase = 'abandoned';
                reject(new DeadlineExceededError());
                return;
              }
              // The COMMIT is on its way: its outcome is the answer, waited for a while longer.
              timers.push(setTimeout(() => reject(new CommitOutcomeUnknownError()), COMMIT_GRACE_MS));
            }, deadline - Date.now()),
          );
        }),
    );
  } catch (err) {
    const { done } = state;
    if (state.phase !== 'committing' || !done || isDefinite(err)) throw asUnavailable(err);
    // The COMMIT was sent and its answer is lost: what became of the transaction is asked of the database.
    // A replay changed nothing, and whether the standby has what it replays is not known: a 503, retried alike.
    if (done.wrote === undefined) throw new DeadlineExceededError();
    if (await committedOnce(sql, done.wrote, err, resolveMs)) return done.result;
    throw new DeadlineExceededError();
  } finally {
    timers.forEach(clearTimeout);
  }
}

export interface CommitOptions<R> {
  /** How long a COMMIT whose answer was lost is looked for (RESOLVE_MS). */
  resolveMs?: number;
  /** Runs the body in a transaction, as writeTransaction does (its default). */
  transact?: (body: (tx: WriteSql) => Promise<R>, control: WriteControl<R>) => Promise<R>;
}

/** The lost COMMITs being resolved, by pool and transaction: the members of a group commit ask once. */
const resolving = new WeakMap<Sql, Map<string, Promise<boolean>>>();

/**
 * committedAfterAll, asked once for each transaction at a time: every write of a group commit lost
 * the same COMMIT's answer, and any one's row proves the transaction's outcome.
 */
function committedOnce(sql: Sql, wrote: WriteTransaction, cause: unknown, resolveMs: number): Promise<boolean> {
  const key = `${wrote.pid}:${wrote.xid}`;
  let pool = resolving.get(sql);
  if (!pool) resolving.set(sql, (pool = new Map<string, Promise<boolean>>()));
  const ours = pool;
  let asked = ours.get(key);
  if (!asked) {
    asked = committedAfterAll(sql, wrote, cause, resolveMs).finally(() => ours.delete(key));
    ours.set(key, asked);
  }
  return asked;
}

/** The transaction id `xid` as the 32-bit xid a row's xmin shows. */
const xid32 = (q: Sql, xid: string) => q`(${xid}::xid8::text::numeric % 4294967296)::text`;

/**
 * Every statement that learns a transaction's outcome says whether its server is in recovery, and is
 * not believed when it is: a standby answers for what it has replayed so far, not for the primary (an
 * id it has not replayed yet is "in the future" there, as one that never committed is on the primary),
 * and refuses pg_current_wal_flush_lsn. Behind a transaction-mode pooler a pool connection can reach a
 * standby after a failover (the pooler fronting the demoted server keeps its clients): asked again.
 */
function fromThePrimary<R extends { recovering: boolean }>(rows: readonly R[], statement: string): R {
  const row = onlyRow(rows, statement);
  if (row.recovering) throw new DatabaseUnavailableError(`${statement} was answered by a standby, not the primary; asked again`);
  return row;
}

/** Where the server's WAL is flushed to now: past the commit of any transaction it calls committed. */
async function flushedNow(sql: Sql, until: number): Promise<string> {
  const { lsn } = fromThePrimary(
    await withDeadline(
      sql<{ recovering: boolean; lsn: string }[]>`
        SELECT pg_is_in_recovery() AS recovering, CASE WHEN NOT pg_is_in_recovery() THEN pg_current_wal_flush_lsn()::text END AS lsn`,
      Math.min(until, Date.now() + 1_000),
    ),
    'pg_current_wal_flush_lsn',
  );
  return lsn;
}

/**
 * What a transaction pg_xact_status calls committed is: `durable`, its row is there and, when
 * the server has synchronous standbys (synchronous_standby_names), one of them has flushed past
 * `mark`, so a failover keeps it; `pending`, its row is not visible yet while its session still
 * holds it (its COMMIT waits for the standby) or the standby has not caught up; `not ours`, the
 * id was given again after a crash to a transaction that did not write our row. A server whose
 * user may not read pg_stat_replication's positions (pg_monitor) stays `pending` with a standby.
 */
async function committedAs(
  sql: Sql,
  { xid, pid, row }: WriteTransaction,
  mark: string,
  until: number,
): Promise<'durable' | 'pending' | 'not ours'> {
  const { ours, holding, replicated } = fromThePrimary(
    await withDeadline(
      sql<{ recovering: boolean; ours: boolean; holding: boolean; replicated: boolean }[]>`
        SELECT
          pg_is_in_recovery() AS recovering,
          EXISTS (
            SELECT 1 FROM ${sql(row.table)}
            WHERE id = ${row.id} AND created_at::text = ${row.createdAt} AND xmin::text = ${xid32(sql, xid)}
          ) AS ours,
          EXISTS (SELECT 1 FROM pg_stat_activity WHERE pid = ${pid} AND backend_xid::text = ${xid32(sql, xid)}) AS holding,
          current_setting('synchronous_standby_names') = ''
            OR coalesce((SELECT max(flush_lsn) FROM pg_stat_replication WHERE sync_state IN ('sync', 'quorum')) >= ${mark}::pg_lsn, false)
            AS replicated`,
      Math.min(until, Date.now() + 1_000),
    ),
    'commit outcome',
  );
  if (ours) return replicated ? 'durable' : 'pending';
  return holding ? 'pending' : 'not ours';
}

/** A failure PostgreSQL answered for this transaction (an ERROR): it rolled back. A lost connection, or none, says nothing. */
const isDefinite = (err: unknown) => err instanceof postgres.PostgresError && err.severity === 'ERROR';

/**
 * Whether a transaction whose COMMIT was sent but not answered committed. While it is still
 * open, its session is ended (only that session: it is matched by its transaction), so that it
 * rolls back unless the COMMIT got there first. Retried while the database is unavailable, for
 * up to `resolveMs`; then CommitOutcomeUnknownError.
 */
export async function committedAfterAll(
  sql: Sql,
  { xid, pid, row }: WriteTransaction,
  cause: unknown,
  resolveMs = RESOLVE_MS,
): Promise<boolean> {
  const until = Date.now() + resolveMs;
  // The server's flushed WAL position when it first said "committed": the standby must have it too.
  let mark: string | undefined;
  while (Date.now() < until) {
    try {
      // pg_xact_status is not called on a standby (CASE evaluates it only on the primary): there an id
      // not replayed yet is "in the future", which would read as "never committed".
      const { status } = fromThePrimary(
        await withDeadline(
          sql<{ recovering: boolean; status: string | null }[]>`
            SELECT pg_is_in_recovery() AS recovering, CASE WHEN NOT pg_is_in_recovery() THEN pg_xact_status(${xid}::xid8) END AS status`,
          Math.min(until, Date.now() + 1_000),
        ),
        'pg_xact_status',
      );
      if (status === 'committed') {
        const seen = await committedAs(sql, { xid, pid, row }, (mark ??= await flushedNow(sql, until)), until);
        if (seen === 'durable') return true;
        if (seen === 'not ours') return false;
        // Committed here but not yet on the synchronous standby (or still waiting for it): asked again.
        await new Promise((resolve) => setTimeout(resolve, 100));
        continue;
      }
      if (status === 'aborted') return false;
      // Still in progress: end its session (pg_stat_activity shows it with our transaction), then ask again.
      await withDeadline(
        sql`
          SELECT pg_terminate_backend(pid, 1000)
          FROM pg_stat_activity
          WHERE pid = ${pid} AND backend_xid::text = ${xid32(sql, xid)} AND NOT pg_is_in_recovery()`,
        Math.min(until, Date.now() + 2_000),
      );
    } catch (err) {
      // "transaction ID … is in the future": after a crash, no WAL of it survived, so it did not commit.
      if (err instanceof postgres.PostgresError && err.code === '22023' && /in the future/.test(err.message)) return false;
      if (!isDatabaseUnavailable(err)) throw new CommitOutcomeUnknownError({ cause: err });
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  throw new CommitOutcomeUnknownError({ cause });
}
