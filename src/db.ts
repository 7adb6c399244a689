import { mkdirSync } from 'node:fs';
import postgres from 'postgres';
import { serviceUnavailable } from './errors';

export type Sql = postgres.Sql;

/** No request waits longer than this for the database; it gets a 503 instead (a frozen server never answers). */
export const QUERY_DEADLINE_MS = 5_000;

/**
 * The time (ms since the epoch) by which a request's database work must be done. A request
 * takes one when it starts and hands it to every query it makes, so that a rate-limit count
 * and an insert together stay within one deadline. Passed explicitly rather than through
 * AsyncLocalStorage, whose promise hooks slow every await in the process.
 */
export type Deadline = number;

/** The deadline of a request starting now. */
export const requestDeadline = (ms = QUERY_DEADLINE_MS): Deadline => Date.now() + ms;

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

const DEADLINE_PASSED = 'The database did not answer within the request deadline; retry shortly';

let inFlight = 0;
/** Queries sent through withDeadline and not yet settled, for the metrics. */
export const queriesInFlight = () => inFlight;

/**
 * Runs a query (or a transaction) within `deadline` (by default QUERY_DEADLINE_MS from now);
 * past it a query is cancelled and the caller gets a 503. A transaction cannot be
 * cancelled from here: statement_timeout ends it on the server.
 */
export async function withDeadline<T>(query: Promise<T> & { cancel?: () => void }, deadline: Deadline = requestDeadline()): Promise<T> {
  const ms = deadline - Date.now();
  // A postgres.js query is sent when first awaited: one past the deadline is never sent.
  if (ms <= 0) {
    if (!('cancel' in query)) query.catch(() => {});
    throw serviceUnavailable(DEADLINE_PASSED);
  }
  inFlight += 1;
  let timer: NodeJS.Timeout | undefined;
  const expiry = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      query.cancel?.();
      query.catch(() => {});
      reject(serviceUnavailable(DEADLINE_PASSED));
    }, ms);
  });
  try {
    return await Promise.race([query, expiry]);
  } finally {
    inFlight -= 1;
    clearTimeout(timer);
  }
}

export interface EmbeddedPostgres {
  url: string;
  stop(): Promise<void>;
}

/**
 * PostgreSQL compiled to WebAssembly (PGlite), served on a loopback port so that the
 * same postgres.js code talks to it as to a real server. `dataDir` undefined: in memory.
 */
export async function startEmbeddedPostgres(dataDir?: string): Promise<EmbeddedPostgres> {
  const { PGlite } = await import('@electric-sql/pglite');
  const { PGLiteSocketServer } = await import('@electric-sql/pglite-socket');
  if (dataDir !== undefined) mkdirSync(dataDir, { recursive: true });
  const db = await PGlite.create(dataDir);
  const server = new PGLiteSocketServer({ db, host: '127.0.0.1', port: 0, maxConnections: 4 });
  await server.start();
  return {
    // getServerConn() reports the port the OS chose for port 0, as host:port.
    url: `postgres://postgres@${server.getServerConn()}/postgres`,
    async stop() {
      await server.stop();
      await db.close();
    },
  };
}
