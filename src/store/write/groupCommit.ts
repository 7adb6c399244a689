import type { GroupMemberTrace, GroupTrace } from '../../ops/tracing';
import type { Sql } from '../database/db';
import { QUERY_DEADLINE_MS } from '../database/deadline';
import { DeadlineExceededError } from '../errors';
import { COMMIT_GRACE_MS, RESOLVE_MS } from './commit';
import { type TransactionMember, type WriteControl, type WriteSql, runTransaction } from './transaction';

/** How many writes share one transaction at most. */
export const GROUP_MEMBERS = 64;

/**
 * How many groups hold a connection at once. While they run, the writes that come make the next
 * group: two let one group's COMMIT wait for its flush while the next one's statements run, and
 * keep the rest of the pool for reads (`npm run bench`: docs/performance.md).
 */
export const GROUPS = 2;

/**
 * How long a group (or the reserve of its connection) holds its slot at most. By then commitWithin
 * has answered every member (its deadline, the COMMIT's grace, the resolution of a lost COMMIT): a
 * group still unsettled holds nobody's answer, and its slot is given to the next, so that one
 * connection that never answers cannot stop the creates. postgres.js fails whatever a connection had
 * pending when it ends (patches/README.md), so this bound is met only by a server that keeps the
 * connection open and never answers (a frozen one).
 */
export const SLOT_BOUND_MS = QUERY_DEADLINE_MS + COMMIT_GRACE_MS + RESOLVE_MS + 1_000;

/** How many times a write goes back to the queue after another member's statement failed its group. */
const REQUEUES = 2;

/** One write waiting for a group's transaction, or in one. */
interface Waiting<R> {
  body: (tx: WriteSql) => Promise<R>;
  control: WriteControl<R>;
  resolve: (value: R) => void;
  reject: (err: unknown) => void;
  requeued: number;
  /** Its span, when its request is traced: its statements run in it, and it links to each group it joins. */
  trace?: GroupMemberTrace;
}

/**
 * Writes that arrive while a connection is being reserved share that connection's transaction: a
 * group commit, run by the one write protocol (runTransaction), so each member keeps the promises of
 * a transaction of its own (`transact` takes writeTransaction's place in commitWithin). A member
 * rolled back for another's sake goes back to the queue for the next group, at most REQUEUES times,
 * then fails with DeadlineExceededError (a 503). A group takes the writes queued when its connection
 * is reserved; at most GROUPS hold one at once, and the writes that come meanwhile make the next.
 * Under no load a write goes alone, as soon as it comes.
 */
export interface GroupCommitter {
  transact<R>(this: void, body: (tx: WriteSql) => Promise<R>, control: WriteControl<R>): Promise<R>;
}

export interface GroupCommitOptions {
  /** Traced: each group a span of its own (its BEGIN and COMMIT), each member's span linked to it. */
  tracing?: { group(members: number): GroupTrace; groupMember(): GroupMemberTrace | undefined };
  /** Told when a group, or the reserve of its connection, held its slot `slotBoundMs` and its slot was given on. */
  stalled?: (what: 'group' | 'reserve') => void;
  /** SLOT_BOUND_MS unless given (tests). */
  slotBoundMs?: number;
}

/** One group's transaction on the reserved connection `tx`; the members it rolled back for another's sake go back to the queue (`requeue`). */
async function runGroup(
  sql: Sql,
  tx: WriteSql,
  group: Waiting<unknown>[],
  requeue: (members: Waiting<unknown>[]) => void,
  tracing: GroupCommitOptions['tracing'],
): Promise<void> {
  const span = tracing?.group(group.length);
  const members = group.map((w): TransactionMember<unknown> => {
    if (span) w.trace?.joined(span);
    const trace = w.trace;
    return { body: w.body, control: w.control, within: trace && ((work) => trace.run(work)) };
  });
  try {
    const outcomes = await runTransaction(sql, tx, members, span && ((work) => span.run(work)));
    const again: Waiting<unknown>[] = [];
    outcomes.forEach((outcome, i) => {
      const w = group[i] as Waiting<unknown>;
      if (outcome.kind === 'committed') w.resolve(outcome.value);
      else if (outcome.kind === 'failed') w.reject(outcome.reason);
      // Failed for others' sake too often: a 503, as a write abandoned at its deadline (never its 25P02, a 500).
      else if (w.requeued >= REQUEUES) w.reject(new DeadlineExceededError());
      else {
        w.requeued += 1;
        again.push(w);
      }
    });
    requeue(again);
  } finally {
    span?.end();
  }
}

export function createGroupCommitter(sql: Sql, { tracing, stalled, slotBoundMs = SLOT_BOUND_MS }: GroupCommitOptions = {}): GroupCommitter {
  // Written by transact and by the groups, read by next: one array, never replaced.
  const queue: Waiting<unknown>[] = [];
  /** The reserve under way, if any: only the one next() made may clear it. */
  let reserving: symbol | undefined;
  let running = 0;

  /** A slot for a group: freed when it ends, or after SLOT_BOUND_MS, whichever comes first (the later frees nothing). */
  function hold(): () => void {
    running += 1;
    let held = true;
    const free = () => {
      if (!held) return false;
      held = false;
      clearTimeout(timer);
      running -= 1;
      next();
      return true;
    };
    const timer = setTimeout(() => free() && stalled?.('group'), slotBoundMs);
    timer.unref();
    return free;
  }

  function start(tx: WriteSql): void {
    // The writes it was reserved for are gone (answered at their deadlines), or every slot is taken.
    if (queue.length === 0 || running >= GROUPS) {
      tx.release();
      return;
    }
    const free = hold();
    const group = queue.splice(0, GROUP_MEMBERS);
    next();
    runGroup(sql, tx, group, requeue, tracing)
      // A fault of our own code: every member is told (one already settled stays as it was).
      .catch((err: unknown) => group.forEach((member) => member.reject(err)))
      .finally(() => {
        tx.release();
        free();
      });
  }

  function next(): void {
    if (reserving || queue.length === 0 || running >= GROUPS) return;
    const mine = Symbol('reserve');
    reserving = mine;
    // While no server of DATABASE_URL takes writes a reserve waits (postgres.js tries each host again), and the
    // writes queued meanwhile are answered at their deadlines: past the bound another reserve may start.
    const timer = setTimeout(() => {
      if (reserving !== mine) return;
      reserving = undefined;
      stalled?.('reserve');
      next();
    }, slotBoundMs);
    timer.unref();
    const done = () => {
      clearTimeout(timer);
      if (reserving === mine) reserving = undefined;
    };
    sql.reserve().then(
      (tx) => {
        done();
        start(tx);
      },
      (err: unknown) => {
        done();
        // Every write waiting would have asked for a connection and met the same failure.
        for (const member of queue.splice(0)) member.reject(err);
      },
    );
  }

  function requeue(members: Waiting<unknown>[]): void {
    queue.unshift(...members);
  }

  return {
    transact<R>(body: (tx: WriteSql) => Promise<R>, control: WriteControl<R>): Promise<R> {
      if (control.abandoned()) return Promise.reject(new DeadlineExceededError());
      const trace = tracing?.groupMember();
      const written = new Promise<R>((resolve, reject) => {
        queue.push({ body, control, resolve, reject, requeued: 0, trace } as Waiting<unknown>);
        next();
      });
      if (!trace) return written;
      return written.then(
        (value) => {
          trace.end();
          return value;
        },
        (err: unknown) => {
          trace.end(err);
          throw err;
        },
      );
    },
  };
}
