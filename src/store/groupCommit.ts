import postgres from 'postgres';
import { type Sql, type WriteControl, type WriteSql, beginStatement, COMMIT_WITHOUT_TIMEOUT } from './db';
import { DeadlineExceededError } from './errors';

/** How many writes share one transaction at most. */
export const GROUP_MEMBERS = 64;

/**
 * How many groups hold a connection at once. While they run, the writes that come make the next
 * group: two let one group's COMMIT wait for its flush while the next one's statements run, and
 * keep the rest of the pool for reads (`npm run bench`: docs/performance.md).
 */
export const GROUPS = 2;

/** How many times a write goes back to the queue after another member's statement failed its group. */
const REQUEUES = 2;

/** One write waiting for a group's transaction, or in one. */
interface Member<R> {
  body: (tx: WriteSql) => Promise<R>;
  control: WriteControl<R>;
  resolve: (value: R) => void;
  reject: (err: unknown) => void;
  requeued: number;
}

/**
 * Writes that arrive while a connection is being reserved share that connection's transaction: a
 * group commit. The group's BEGIN and every member's statements leave in one socket write and are
 * answered in one read; one COMMIT, sent when every statement ran and no member has been abandoned,
 * commits them all. Each member keeps writeTransaction's promises (`transact` takes its place in
 * commitWithin): abandoned before its statements, it is not sent; abandoned before the COMMIT, the
 * whole group rolls back, and the members still within their deadlines go back to the queue for
 * the next group, so that nothing answered 503 ever commits. A member whose own statement fails is
 * told its error; the statements after it in the group failed only because the transaction had
 * (SQLSTATE 25P02), so their members go back to the queue too, at most REQUEUES times, and then
 * fail with DeadlineExceededError (a 503). A COMMIT whose answer is lost is every member's to
 * resolve (commitWithin asks once per transaction). A group takes the writes
 * queued when its connection is reserved; at most GROUPS hold one at once, and the writes that come
 * meanwhile make the next. Under no load a write goes alone, as soon as it comes.
 */
export interface GroupCommitter {
  transact<R>(this: void, body: (tx: WriteSql) => Promise<R>, control: WriteControl<R>): Promise<R>;
}

/** A failure that says only that an earlier statement of the transaction failed. */
const inFailedTransaction = (err: unknown) => err instanceof postgres.PostgresError && err.code === '25P02';

/**
 * One group's transaction on the reserved connection `tx`: BEGIN and every member's statements in one
 * write, then one COMMIT, or a rollback that sends back to the queue (`requeue`) the members it did not fail.
 */
async function runGroup(sql: Sql, tx: WriteSql, group: Member<unknown>[], requeue: (members: Member<unknown>[]) => void): Promise<void> {
  const live = group.filter((member) => {
    if (!member.control.abandoned()) return true;
    member.reject(new DeadlineExceededError());
    return false;
  });
  if (live.length === 0) return;
  // Sent now, not awaited: every member's first statement leaves in the same write (writeTransaction's BEGIN).
  const begun = tx.unsafe(beginStatement(sql)).execute();
  // Its failure is read below, once every statement settled: meanwhile it is not an unhandled rejection.
  begun.catch(() => {});
  const ran = await Promise.allSettled(live.map((member) => member.body(tx)));
  const beginFailed = await begun.then(
    () => undefined,
    (err: unknown) => err ?? new Error('BEGIN failed'),
  );
  const results: unknown[] = [];
  for (const outcome of ran) if (outcome.status === 'fulfilled') results.push(outcome.value);
  if (beginFailed !== undefined || results.length < live.length) {
    await tx`ROLLBACK`.catch(() => {});
    const again: Member<unknown>[] = [];
    live.forEach((member, i) => {
      const outcome = ran[i] as PromiseSettledResult<unknown>;
      const own = outcome.status === 'rejected' && !inFailedTransaction(outcome.reason);
      // Without its BEGIN a statement may have run on its own: nobody's write is sent again.
      if (beginFailed !== undefined) member.reject(outcome.status === 'rejected' ? outcome.reason : beginFailed);
      else if (own) member.reject(outcome.reason);
      // Failed for others' sake too often: a 503, as a write abandoned at its deadline (never its 25P02, a 500).
      else if (member.requeued >= REQUEUES) member.reject(new DeadlineExceededError());
      else {
        member.requeued += 1;
        again.push(member);
      }
    });
    requeue(again);
    return;
  }
  // Every statement ran. A member answered 503 meanwhile must not commit, so none does now.
  if (live.some((member) => member.control.abandoned())) {
    await tx`ROLLBACK`.catch(() => {});
    const again: Member<unknown>[] = [];
    for (const member of live) {
      if (member.control.abandoned()) member.reject(new DeadlineExceededError());
      else again.push(member);
    }
    requeue(again);
    return;
  }
  live.forEach((member, i) => member.control.committing(results[i]));
  try {
    // As writeTransaction's: not under the statement timeout; a COMMIT still waiting at a deadline is commitWithin's to resolve.
    await tx.unsafe(COMMIT_WITHOUT_TIMEOUT);
  } catch (err) {
    for (const member of live) member.reject(err);
    return;
  }
  live.forEach((member, i) => member.resolve(results[i]));
}

export function createGroupCommitter(sql: Sql): GroupCommitter {
  // Written by transact and by the groups, read by next: one array, never replaced.
  const queue: Member<unknown>[] = [];
  let reserving = false;
  let running = 0;

  function next(): void {
    if (reserving || queue.length === 0 || running >= GROUPS) return;
    reserving = true;
    sql.reserve().then(
      (tx) => {
        reserving = false;
        running += 1;
        const group = queue.splice(0, GROUP_MEMBERS);
        next();
        runGroup(sql, tx, group, requeue)
          // A fault of our own code: every member is told (one already settled stays as it was).
          .catch((err: unknown) => group.forEach((member) => member.reject(err)))
          .finally(() => {
            running -= 1;
            tx.release();
            next();
          });
      },
      (err: unknown) => {
        reserving = false;
        // Every write waiting would have asked for a connection and met the same failure.
        for (const member of queue.splice(0)) member.reject(err);
      },
    );
  }

  function requeue(members: Member<unknown>[]): void {
    queue.unshift(...members);
  }

  return {
    transact<R>(body: (tx: WriteSql) => Promise<R>, control: WriteControl<R>): Promise<R> {
      if (control.abandoned()) return Promise.reject(new DeadlineExceededError());
      return new Promise<R>((resolve, reject) => {
        queue.push({ body, control, resolve, reject, requeued: 0 } as Member<unknown>);
        next();
      });
    },
  };
}
