import postgres from 'postgres';
import type { StatementHook } from '../../ops/tracing';
import { type Deadline, QUERY_DEADLINE_MS, requestDeadline } from './deadline';
import { DatabaseUnavailableError, DeadlineExceededError, isDatabaseUnavailable } from '../errors';

export type Sql = postgres.Sql;

// int8 (bigint) columns arrive as text. Our ids are JSON numbers, so a value that
// a number cannot hold exactly is a fault, never a silently rounded id.
const int8AsSafeNumber = {
  to: 20,
  from: [20],
  serialize: (x: number) => String(x),
  parse: (x: string) => {
    const n = Number(x);
    if (!Number.isSafeInteger(n)) throw new RangeError(`int8 value ${x} is beyond 2^53-1`);
    return n;
  },
};

/**
 * `session`: each connection is a server session of its own (PostgreSQL, or a pooler in
 * session mode). `transaction`: a pooler in transaction mode (PgBouncer's `pool_mode =
 * transaction`, the poolers of managed PostgreSQL services) may give each transaction another
 * server connection, and refuses startup parameters it does not know.
 */
export type PoolMode = 'session' | 'transaction';

export interface ConnectOptions {
  /** Pool size. The embedded PGlite serves one session at a time: use 1 there. */
  max: number;
  /** Default `session`. */
  poolMode?: PoolMode;
  /** Tracing on: a span per statement of a traced request (`startTracing`). */
  statements?: StatementHook;
}

/** PostgreSQL's documented value for data in memory or on SSD (its default, 4, prices a spinning disk's seek). */
export const RANDOM_PAGE_COST = 1.1;

/** Pools made for a transaction-mode pooler: their transactions set their own statement timeout. */
const transactionPooled = new WeakSet<Sql>();

/** Every postgres.js pool in the product is made here, with the same options. */
export function connect(url: string, { max, poolMode = 'session', statements }: ConnectOptions): Sql {
  const sql = postgres(url, {
    max,
    connect_timeout: 5,
    idle_timeout: 30,
    // The default backoff grows to 20 s between reconnects; cap it so the service
    // recovers within about a second of the database coming back.
    backoff: (retries: number) => Math.min(0.05 * 2 ** retries, 1),
    // Behind a transaction-mode pooler, a named prepared statement made on one server connection
    // is missing on the next, and the pooler refuses statement_timeout as a startup parameter:
    // statements go unnamed, and transactions set the timeout themselves (transaction(), below);
    // a single statement past its deadline is cancelled by withDeadline, through the pooler.
    prepare: poolMode === 'session',
    // Behind a transaction-mode pooler, a connection is sent one statement at a time: postgres.js otherwise sends a
    // statement on a busy connection without waiting (its pipeline), and PgBouncer (1.18, Debian's) gives the server
    // back at the first one's ReadyForQuery; the answer to the one behind it comes to a server no client is linked
    // to and is dropped, and the statement waits forever (test/system/store/pipelinedPooler.test.ts). A transaction
    // on a reserved connection (a create's) still sends its statements without waiting: its server stays linked until
    // it ends (patches/README.md).
    max_pipeline: poolMode === 'transaction' ? 0 : 100,
    // random_page_cost: the catalogue is read by index from memory (or SSD), where a page read out of order costs about
    // what the next one does; at the default 4 the planner walks the primary key from a deep cursor of a category and a
    // status, reading 60 animals for each it returns, rather than their index (test/component/store/plan.test.ts).
    connection:
      poolMode === 'session'
        ? { application_name: 'animal-store-api', statement_timeout: QUERY_DEADLINE_MS, random_page_cost: RANDOM_PAGE_COST }
        : { application_name: 'animal-store-api' },
    types: { int8: int8AsSafeNumber },
    // postgres.js reads the server's array types on every new connection by default, and that
    // read's failure is handled by nobody: a connection cut during it (a replica stopping) and
    // refused on reconnect ended the process with an unhandled rejection. No statement here
    // sends or reads an array; a new connection is also one round trip shorter.
    fetch_types: false,
    onnotice: () => {},
    // Called as each statement is sent, with its text ($n placeholders, never the values) and the query.
    debug: statements ?? false,
  });
  if (poolMode === 'transaction') transactionPooled.add(sql);
  return sql;
}

/**
 * A transaction, with the statement timeout every connection of a session-mode pool has from
 * its startup; behind a transaction-mode pooler it is set for this transaction (SET LOCAL).
 */
export function transaction<T>(sql: Sql, body: (tx: postgres.TransactionSql) => Promise<T>): Promise<T> {
  return sql.begin(async (tx) => {
    if (transactionPooled.has(sql)) await tx.unsafe(`SET LOCAL statement_timeout = ${QUERY_DEADLINE_MS}`);
    return body(tx);
  }) as Promise<T>;
}

const BEGIN_WITH_TIMEOUT = `BEGIN; SET LOCAL statement_timeout = ${QUERY_DEADLINE_MS}`;
/** The BEGIN of a write's transaction on `sql` (write/transaction.ts): one simple-protocol message; behind a transaction-mode pooler it sets the statement timeout too. */
export const beginStatement = (sql: Sql) => (transactionPooled.has(sql) ? BEGIN_WITH_TIMEOUT : 'BEGIN');

let inFlight = 0;
/** Queries sent through withDeadline (and transactions through commitWithin) not yet settled, for the metrics. */
export const queriesInFlight = () => inFlight;

/** Runs `work`, counted among the queries in flight while it runs. */
export async function counted<T>(work: () => Promise<T>): Promise<T> {
  inFlight += 1;
  try {
    return await work();
  } finally {
    inFlight -= 1;
  }
}

/** A failure that says the database cannot serve right now, as DatabaseUnavailableError (the driver's error its cause); others as they are. */
export function asUnavailable(err: unknown): unknown {
  return isDatabaseUnavailable(err) && !(err instanceof DatabaseUnavailableError)
    ? new DatabaseUnavailableError('The database is unavailable; retry shortly', { cause: err })
    : err;
}

/** The one row a statement that always returns one row (an INSERT … RETURNING, an aggregate) returned. */
export function onlyRow<T>(rows: readonly T[], statement: string): T {
  const [row] = rows;
  if (row === undefined) throw new Error(`${statement} returned no row`);
  return row;
}

/**
 * Runs a query (or a transaction) within `deadline` (by default QUERY_DEADLINE_MS from now).
 * Past it the query is cancelled and DeadlineExceededError thrown; a failure that says the
 * database cannot serve right now becomes DatabaseUnavailableError (with the driver's error
 * as its cause). A transaction cannot be cancelled from here: statement_timeout ends it on the server;
 * a transaction that writes goes through `commitWithin`, so that a write
 * answered as failed never commits afterwards.
 */
export function withDeadline<T>(query: Promise<T> & { cancel?: () => unknown }, deadline: Deadline = requestDeadline()): Promise<T> {
  const ms = deadline - Date.now();
  // A postgres.js query is sent when first awaited: one past the deadline is never sent.
  if (ms <= 0) {
    if (!('cancel' in query)) query.catch(() => {});
    return Promise.reject(new DeadlineExceededError());
  }
  // One promise, settled by whichever comes first: the query's outcome or the deadline. The query is
  // counted among those in flight until then.
  return new Promise<T>((resolve, reject) => {
    inFlight += 1;
    let settled = false;
    const settle = () => {
      if (settled) return false;
      settled = true;
      inFlight -= 1;
      clearTimeout(timer);
      return true;
    };
    const timer = setTimeout(() => {
      if (!settle()) return;
      // The cancel request goes over a new connection, which fails when the server has gone away
      // meanwhile: the query is answered by its deadline either way (patches/README.md).
      const cancelling = query.cancel?.();
      if (cancelling instanceof Promise) cancelling.catch(() => {});
      reject(new DeadlineExceededError());
    }, ms);
    // Sends a postgres.js query; its outcome after the deadline is let go. It rejects with the driver's errors.
    query.then(
      (value) => settle() && resolve(value),
      (err: unknown) => settle() && reject(asUnavailable(err) as Error),
    );
  });
}
