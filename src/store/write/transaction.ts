import postgres from 'postgres';
import { type Sql, beginStatement } from '../database/db';
import { DeadlineExceededError } from '../errors';

/** The connection a write's transaction runs on: its statements, and only its. */
export type WriteSql = postgres.ReservedSql;

/** A write's COMMIT: one message, not under the statement timeout (runTransaction says why). */
export const COMMIT_WITHOUT_TIMEOUT = 'SET LOCAL statement_timeout = 0; COMMIT';

/** What a write's transaction asks its caller (commitWithin) as it goes. */
export interface WriteControl<R> {
  /** Asked before BEGIN and before COMMIT: true, the write is not begun, or is rolled back (DeadlineExceededError). */
  abandoned(): boolean;
  /** Told just before COMMIT is sent, with the body's result: from here the outcome is the COMMIT's. */
  committing(result: R): void;
}

/** One write of a transaction: its statements, and its caller's say in it. */
export interface TransactionMember<R> {
  body: (tx: WriteSql) => Promise<R>;
  control: WriteControl<R>;
  /** Runs the write's statements where they belong (its request's trace, when traced). */
  within?: <T>(work: () => T) => T;
}

/** How one member's part in a transaction ended. */
export type MemberOutcome<R> =
  | { kind: 'committed'; value: R }
  | { kind: 'failed'; reason: unknown }
  /** Rolled back for another member's sake: nothing of it committed, and it may run again in another transaction. */
  | { kind: 'again' };

/** Where the transaction's own statements (BEGIN, COMMIT, ROLLBACK) run: a traced group's span. */
export type TransactionScope = <T>(work: () => T) => T;

const same: TransactionScope = (work) => work();
const AGAIN = { kind: 'again' } as const;
const failed = (reason: unknown) => ({ kind: 'failed', reason }) as const;

/** A failure that says only that an earlier statement of the transaction failed. */
const inFailedTransaction = (err: unknown) => err instanceof postgres.PostgresError && err.code === '25P02';

/**
 * The one write protocol: a transaction on the reserved connection `tx` for one write or several (a
 * group commit), in two round trips. BEGIN leaves with every member's first statement (postgres.js
 * writes them at once, and one answer carries them all; `sql.begin` waits for BEGIN's answer first);
 * COMMIT follows when every statement ran and no member was abandoned meanwhile. A member abandoned
 * before BEGIN is never sent; one abandoned before COMMIT rolls the transaction back, so that nothing
 * answered 503 ever commits. Any failure before COMMIT rolls back: the member whose own statement
 * failed is told its error, the others (whose statements failed only because the transaction had,
 * SQLSTATE 25P02, or that were rolled back for another's abandonment) may run again. After BEGIN
 * failed nobody runs again: a statement may have run on its own. COMMIT is not under the statement
 * timeout: PostgreSQL answers a COMMIT whose wait for the synchronous standby was cancelled as done,
 * though the standby may not have it (a failover would lose it). A failed COMMIT is every member's
 * to resolve (commitWithin asks once per transaction). Nothing here waits without a bound once the
 * connection ends: postgres.js fails whatever was pending on it (patches/README.md).
 */
export async function runTransaction(
  sql: Sql,
  tx: WriteSql,
  members: readonly TransactionMember<unknown>[],
  scope: TransactionScope = same,
): Promise<MemberOutcome<unknown>[]> {
  const outcomes: MemberOutcome<unknown>[] = members.map((m) => (m.control.abandoned() ? failed(new DeadlineExceededError()) : AGAIN));
  const live = members.flatMap((m, i) => (outcomes[i] === AGAIN ? [{ m, i }] : []));
  if (live.length === 0) return outcomes;
  // Sent now, not awaited: every member's first statement leaves in the same write. One simple-protocol
  // message; behind a transaction-mode pooler it sets the transaction's statement timeout too.
  const begun = scope(() => tx.unsafe(beginStatement(sql)).execute());
  // Its failure is read below, once every statement settled: meanwhile it is not an unhandled rejection.
  begun.catch(() => {});
  const ran = await Promise.allSettled(live.map(({ m }) => (m.within ?? same)(() => m.body(tx))));
  const beginFailed = await begun.then(
    () => undefined,
    (err: unknown) => err ?? new Error('BEGIN failed'),
  );
  // Each statement of its own is sent (execute) inside the scope: a query takes the async context it is sent from.
  const rollBack = () => scope(() => tx`ROLLBACK`.execute()).catch(() => {});
  const own = ran.map((r) => r.status === 'rejected' && !inFailedTransaction(r.reason));
  if (beginFailed !== undefined || ran.some((r) => r.status === 'rejected')) {
    await rollBack();
    live.forEach(({ i }, k) => {
      const r = ran[k] as PromiseSettledResult<unknown>;
      // Without its BEGIN a statement may have run on its own: nobody's write runs again.
      if (beginFailed !== undefined) outcomes[i] = failed(r.status === 'rejected' ? r.reason : beginFailed);
      // A 25P02 is another member's doing only when another member failed on its own.
      else if (r.status === 'rejected' && (own[k] || !own.some((o, j) => o && j !== k))) outcomes[i] = failed(r.reason);
    });
    return outcomes;
  }
  const results = ran.map((r) => (r as PromiseFulfilledResult<unknown>).value);
  // Every statement ran. A member answered 503 meanwhile must not commit, so none does now.
  if (live.some(({ m }) => m.control.abandoned())) {
    await rollBack();
    for (const { m, i } of live) if (m.control.abandoned()) outcomes[i] = failed(new DeadlineExceededError());
    return outcomes;
  }
  live.forEach(({ m }, k) => m.control.committing(results[k]));
  try {
    // One message, one round trip; a COMMIT still waiting at a deadline is commitWithin's to resolve.
    await scope(() => tx.unsafe(COMMIT_WITHOUT_TIMEOUT).execute());
  } catch (err) {
    for (const { i } of live) outcomes[i] = failed(err);
    return outcomes;
  }
  live.forEach(({ i }, k) => (outcomes[i] = { kind: 'committed', value: results[k] }));
  return outcomes;
}

/**
 * A write's transaction on a connection of its own: the protocol of runTransaction for one member
 * (the keyed creates, whose advisory lock is their session's, and the webhook endpoints' writes).
 */
export async function writeTransaction<R>(sql: Sql, body: (tx: WriteSql) => Promise<R>, control: WriteControl<R>): Promise<R> {
  if (control.abandoned()) throw new DeadlineExceededError();
  const tx = await sql.reserve();
  try {
    const [outcome] = (await runTransaction(sql, tx, [{ body, control }])) as [MemberOutcome<R>];
    if (outcome.kind === 'committed') return outcome.value;
    // Alone, nothing fails for another's sake.
    throw outcome.kind === 'failed' ? outcome.reason : new DeadlineExceededError();
  } finally {
    tx.release();
  }
}
