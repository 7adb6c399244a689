import postgres from 'postgres';
import { type Deadline, QUERY_DEADLINE_MS, requestDeadline } from './deadline';
import { DatabaseUnavailableError, DeadlineExceededError, isDatabaseUnavailable } from './errors';

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

export interface ConnectOptions {
  /** Pool size. The embedded PGlite serves one session at a time: use 1 there. */
  max: number;
}

/** Every postgres.js pool in the product is made here, with the same options. */
export function connect(url: string, { max }: ConnectOptions): Sql {
  return postgres(url, {
    max,
    connect_timeout: 5,
    idle_timeout: 30,
    // The default backoff grows to 20 s between reconnects; cap it so the service
    // recovers within about a second of the database coming back.
    backoff: (retries: number) => Math.min(0.05 * 2 ** retries, 1),
    connection: { application_name: 'animal-store-api', statement_timeout: QUERY_DEADLINE_MS },
    types: { int8: int8AsSafeNumber },
    onnotice: () => {},
  });
}

let inFlight = 0;
/** Queries sent through withDeadline and not yet settled, for the metrics. */
export const queriesInFlight = () => inFlight;

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
 * as its cause). A transaction cannot be cancelled from here: statement_timeout ends it on the server.
 */
export async function withDeadline<T>(query: Promise<T> & { cancel?: () => void }, deadline: Deadline = requestDeadline()): Promise<T> {
  const ms = deadline - Date.now();
  // A postgres.js query is sent when first awaited: one past the deadline is never sent.
  if (ms <= 0) {
    if (!('cancel' in query)) query.catch(() => {});
    throw new DeadlineExceededError();
  }
  inFlight += 1;
  let timer: NodeJS.Timeout | undefined;
  const expiry = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      query.cancel?.();
      query.catch(() => {});
      reject(new DeadlineExceededError());
    }, ms);
  });
  try {
    return await Promise.race([query, expiry]);
  } catch (err) {
    if (isDatabaseUnavailable(err) && !(err instanceof DatabaseUnavailableError)) {
      throw new DatabaseUnavailableError('The database is unavailable; retry shortly', { cause: err });
    }
    throw err;
  } finally {
    inFlight -= 1;
    clearTimeout(timer);
  }
}
