import type { Logger } from '../ops/logger';
import { type Sql, onlyRow, withDeadline } from './db';
import type { Deadline } from './deadline';

/** Requests each API key may make per window (RATE_LIMIT). */
export interface RateLimit {
  requests: number;
  windowSeconds: number;
}

export interface RateDecision {
  allowed: boolean;
  limit: number;
  /** Requests left in this window after this one. */
  remaining: number;
  /** Seconds until the window resets. */
  resetSeconds: number;
  windowSeconds: number;
}

export interface RateLimiter {
  /** Counts one request of `owner` (the SHA-256 of its API key) and says whether it may proceed; a count it must write ends by `deadline`. */
  take(owner: string, deadline?: Deadline): Promise<RateDecision>;
  /** Sends the counts not yet written; the server calls this on a timer and on shutdown. */
  flush(): Promise<void>;
}

interface Counter {
  window: number;
  /** The count across every instance, as of this process's last exchange with the database. */
  known: number;
  /** Requests this process let through and has not yet added to the database. */
  pending: number;
  /** When `known` was read (ms since the epoch); 0: never. */
  syncedAt: number;
  syncing?: Promise<void>;
}

/**
 * Fixed windows per API key, counted in PostgreSQL so that every instance sees every
 * request. Most requests cost no round trip: a process adds the counts it let through, and
 * reads the total back, in one statement per key — when its knowledge of the total is older
 * than `maxStalenessMs`, when a request would reach the limit by its count, and on the
 * server's flush timer. So the limit can be passed only by what other instances let through
 * within the last `maxStalenessMs`.
 */
export function createRateLimiter(
  sql: Sql,
  { requests: limit, windowSeconds }: RateLimit,
  logger: Logger,
  { maxStalenessMs = 250 } = {},
): RateLimiter {
  const counters = new Map<string, Counter>();
  let lastFailureLog = 0;

  const add = async (owner: string, window: number, n: number, deadline?: Deadline): Promise<number> => {
    const rows = await withDeadline(
      sql<{ count: number }[]>`
        INSERT INTO rate_limit_counts (owner, window_start, count)
        VALUES (${owner}, ${window * windowSeconds}, ${n})
        ON CONFLICT (owner, window_start) DO UPDATE SET count = rate_limit_counts.count + EXCLUDED.count
        RETURNING count`,
      deadline,
    );
    return onlyRow(rows, 'INSERT INTO rate_limit_counts').count;
  };

  // Requests arriving while a count is being written wait for that write, within its deadline.
  const sync = (owner: string, c: Counter, deadline?: Deadline): Promise<void> => {
    c.syncing ??= (async () => {
      const n = c.pending;
      c.pending = 0;
      try {
        c.known = await add(owner, c.window, n, deadline);
        c.syncedAt = Date.now();
      } catch (err) {
        // The counts are kept for the next try. Requests are not refused because the
        // limiter could not count them: the database being down answers them anyway.
        c.pending += n;
        if (Date.now() - lastFailureLog > 10_000) {
          lastFailureLog = Date.now();
          logger.warn({ err }, 'rate limiter: could not write the counts; retrying');
        }
      } finally {
        c.syncing = undefined;
      }
    })();
    return c.syncing;
  };

  const counterOf = (owner: string, window: number): Counter => {
    let c = counters.get(owner);
    if (!c || c.window !== window) {
      c = { window, known: 0, pending: 0, syncedAt: 0 };
      counters.set(owner, c);
    }
    return c;
  };

  return {
    async take(owner, deadline) {
      const now = Date.now() / 1000;
      const window = Math.floor(now / windowSeconds);
      const resetSeconds = Math.max(1, Math.ceil((window + 1) * windowSeconds - now));
      const c = counterOf(owner, window);
      const refused = { allowed: false, limit, remaining: 0, resetSeconds, windowSeconds };
      // Counts only grow within a window: once the database says the limit is reached, it stays reached.
      if (c.known >= limit) return refused;
      if (Date.now() - c.syncedAt > maxStalenessMs || c.known + c.pending >= limit) await sync(owner, c, deadline);
      const used = c.known + c.pending;
      if (used >= limit) return refused;
      c.pending += 1;
      return { allowed: true, limit, remaining: limit - used - 1, resetSeconds, windowSeconds };
    },

    async flush() {
      const current = Math.floor(Date.now() / 1000 / windowSeconds);
      await Promise.all(
        [...counters].map(async ([owner, c]) => {
          if (c.pending > 0) await sync(owner, c);
          // A past window whose counts are written is of no more use here.
          if (c.window < current && c.pending === 0) counters.delete(owner);
        }),
      );
    },
  };
}
