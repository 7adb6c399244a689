import type { Logger } from '../ops/logger';
import { type Sql, onlyRow, withDeadline } from './database/db';
import { type Deadline, requestDeadline } from './database/deadline';

/** Requests each client (all of its API keys) may make per window (RATE_LIMIT). */
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
  /** The window it was counted in (seconds since the epoch / windowSeconds). */
  window: number;
}

export interface RateLimiter {
  /**
   * Spends one of client `clientId`'s requests of this window (whichever of its keys came with it)
   * and says whether it may proceed. A reservation it must make first ends by `deadline`, or throws (the database
   * cannot say, so the request is not let through: 503).
   */
  take(clientId: string, deadline?: Deadline): Promise<RateDecision>;
  /**
   * Gives back the request `decision` spent (a conditional read answered 304 is not counted), to be
   * spent again by this process; the decision as it stands after it. Nothing is given back once
   * its window has ended (the count is gone with it) or for a refused request.
   */
  refund(clientId: string, decision: RateDecision): RateDecision;
  /**
   * Says the request `decision` let through has been answered and its request stays spent (every
   * answer but a refunded 304; a second call, or one after `refund`, does nothing). Until then a
   * request that finds the window's tokens all held by requests still being answered waits for them,
   * since a 304 among them gives its token back, rather than being refused while none is spent.
   */
  settle(clientId: string, decision: RateDecision): void;
  /**
   * Gives back the requests this process reserved and has not spent, for keys idle for at least
   * `idleMs` (every client with 0: at shutdown), so that other instances may spend them.
   */
  flush(idleMs?: number): Promise<void>;
}

interface Counter {
  window: number;
  /** Requests this process reserved in the database for this window and has not spent yet. */
  tokens: number;
  /** The window's count in the database (every instance's reservations) after this process's last reservation. */
  total: number;
  /** The last reservation got less than it asked for: the window is spent, as of `checkedAt`. */
  exhausted: boolean;
  checkedAt: number;
  /** When this process last spent one of the key's requests. */
  usedAt: number;
  /** Requests waiting for the reservation in flight. */
  waiting: number;
  reserving?: Promise<void>;
  /** Tokens spent by requests not answered yet (neither settled nor refunded). */
  held: number;
  /** Requests waiting for one of those to be answered, woken when one is (or the window changes). */
  waiters: (() => void)[];
}

/** Wakes every request waiting on the counter's held tokens. */
function wake(c: Counter): void {
  const waiters = c.waiters;
  c.waiters = [];
  for (const w of waiters) w();
}

/** Resolves when a request holding one of the counter's tokens is answered, or at `deadline`. */
function heldTokenAnswered(c: Counter, deadline: Deadline): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, Math.max(0, deadline - Date.now()));
    c.waiters.push(() => {
      clearTimeout(timer);
      resolve();
    });
  });
}

/**
 * The most a process reserves at once (unless more requests wait). What a process holds when it dies (SIGKILL: never
 * given back), and a reservation whose answer was lost, stay counted until the window ends. Uncapped, a process's
 * first reservation in a window was an eighth of the whole limit (it does not know the count yet): with RATE_LIMIT
 * 999999999/1h, eight worker starts (the soak kills one instance's workers every few minutes) drained the window, and
 * its 3 million requests were refused as if they had made 999,999,999. Capped, each costs the window at most this;
 * a process at 5,000 requests a second reserves 5 times a second.
 */
export const MAX_RESERVATION = 1_000;

type Warn = (err: unknown, what: string) => void;
type WindowCounts = ReturnType<typeof windowCounts>;

/** A window's count in the database (rate_limit_counts): reservations added to it, and what goes back subtracted. */
function windowCounts(sql: Sql, limit: number, windowSeconds: number, warn: Warn) {
  /** Subtracts `n` from the window's count: unspent tokens, or the part of a reservation that was not granted. */
  const subtract = (clientId: string, window: number, n: number, deadline?: Deadline) =>
    withDeadline(
      sql`UPDATE rate_limit_counts SET count = count - ${n} WHERE client_id = ${clientId} AND window_start = ${window * windowSeconds}`,
      deadline,
    );

  /** Adds `want` to the window's count; returns the count after it and what was granted. */
  const reserve = async (clientId: string, window: number, want: number, deadline?: Deadline) => {
    const rows = await withDeadline(
      sql<{ count: number }[]>`
        INSERT INTO rate_limit_counts (client_id, window_start, count)
        VALUES (${clientId}, ${window * windowSeconds}, ${want})
        ON CONFLICT (client_id, window_start) DO UPDATE SET count = rate_limit_counts.count + EXCLUDED.count
        RETURNING count`,
      deadline,
    );
    const { count } = onlyRow(rows, 'INSERT INTO rate_limit_counts');
    const granted = Math.min(want, Math.max(0, limit - (count - want)));
    if (granted === want) return { count, granted };
    // The part not granted goes back at once, so that the count stays what was granted (a key over its
    // limit would otherwise grow it with every request, and tokens given back later could not be spent).
    await subtract(clientId, window, want - granted, deadline).catch((err: unknown) => warn(err, 'could not correct a count'));
    return { count: count - (want - granted), granted };
  };
  return { reserve, subtract };
}

/**
 * RateLimiter.refund: the request `decision` spent goes back to the counter it was taken from (this
 * process's reservation, still counted in the database), while that window lasts.
 */
function refundTo(c: Counter | undefined, decision: RateDecision): RateDecision {
  const now = Math.floor(Date.now() / 1000 / decision.windowSeconds);
  if (!decision.allowed || !c || c.window !== decision.window || now !== c.window) return decision;
  c.tokens += 1;
  return { ...decision, remaining: Math.max(0, decision.limit - c.total) + c.tokens };
}

/** The request `decision` let through is answered: its token is no longer held (once per decision). */
function answered(c: Counter | undefined, decision: RateDecision, settled: WeakSet<RateDecision>): void {
  if (!decision.allowed || settled.has(decision)) return;
  settled.add(decision);
  if (!c || c.window !== decision.window) return;
  c.held = Math.max(0, c.held - 1);
  wake(c);
}

/**
 * Fixed windows per client (all of its API keys), counted in PostgreSQL, where every instance takes its share of the
 * window's requests before spending it: a request spends a token its process reserved, and a
 * reservation (one statement) is granted only out of what the window has left. So however the
 * requests arrive, and across any number of instances and workers on one database, no more
 * than `limit` requests are let through in a window. Most requests cost no round trip: a process
 * reserves an eighth of what is left (at least one, at most MAX_RESERVATION, and at least as many as are waiting), and
 * gives back what it has not spent once the client has been idle on it for `idleMs` (the server's
 * flush timer), so that a client whose traffic moves to other instances is not refused early for long.
 *
 * Why the total holds: a reservation asking for `want` when the count is `c` adds `want` to the
 * count and is granted `min(want, max(0, limit - c))`, the part of [c, c + want) below the limit.
 * Statements on one row are serialised by its lock, so the granted ranges never overlap: the
 * tokens every process holds or has spent never exceed min(count, limit). Subtracting what was
 * not granted, or `n` unspent tokens given back, lowers both sides alike.
 */
export function createRateLimiter(
  sql: Sql,
  { requests: limit, windowSeconds }: RateLimit,
  logger: Logger,
  { recheckMs = 250 } = {},
): RateLimiter {
  const counters = new Map<string, Counter>();
  /** Decisions whose request was answered (settled or refunded): each releases its held token once. */
  const settled = new WeakSet<RateDecision>();
  let lastFailureLog = 0;

  const warn = (err: unknown, what: string) => {
    if (Date.now() - lastFailureLog < 10_000) return;
    lastFailureLog = Date.now();
    logger.warn({ err }, `rate limiter: ${what}`);
  };

  const counts = windowCounts(sql, limit, windowSeconds, warn);

  // Requests arriving while a reservation is in flight wait for it, within its deadline.
  const reserve = (clientId: string, c: Counter, deadline?: Deadline): Promise<void> =>
    (c.reserving ??= (async () => {
      const left = Math.max(0, limit - c.total);
      const want = Math.max(1, Math.min(left, Math.max(Math.min(Math.floor(left / 8), MAX_RESERVATION), c.waiting)));
      try {
        const { count, granted } = await counts.reserve(clientId, c.window, want, deadline);
        c.tokens += granted;
        c.total = count;
        c.exhausted = granted < want || count >= limit;
        c.checkedAt = Date.now();
      } finally {
        c.reserving = undefined;
      }
    })());

  const counterOf = (clientId: string, window: number): Counter => {
    let c = counters.get(clientId);
    if (!c || c.window !== window) {
      // Requests waiting on the past window's held tokens look again, at this window.
      if (c) wake(c);
      c = { window, tokens: 0, total: 0, exhausted: false, checkedAt: 0, usedAt: 0, waiting: 0, held: 0, waiters: [] };
      counters.set(clientId, c);
    }
    return c;
  };

  return {
    async take(clientId, deadline = requestDeadline()) {
      for (;;) {
        const now = Date.now() / 1000;
        const window = Math.floor(now / windowSeconds);
        const resetSeconds = Math.max(1, Math.ceil((window + 1) * windowSeconds - now));
        const c = counterOf(clientId, window);
        if (c.tokens > 0) {
          c.tokens -= 1;
          c.held += 1;
          c.usedAt = Date.now();
          // What the window has left for this key: unreserved in the database, and unspent here.
          const remaining = Math.max(0, limit - c.total) + c.tokens;
          return { allowed: true, limit, remaining, resetSeconds, windowSeconds, window };
        }
        const refused = { allowed: false, limit, remaining: 0, resetSeconds, windowSeconds, window };
        // The window's last tokens are held by requests still being answered: a 304 among them gives
        // its token back, so none is refused before they are answered (within this request's deadline).
        if (c.exhausted && c.held > 0) {
          if (Date.now() >= deadline) return refused;
          await heldTokenAnswered(c, deadline);
          continue;
        }
        // Spent, as of a moment ago: refused without a round trip; later, asked again (others may have given some back).
        if (c.exhausted && Date.now() - c.checkedAt < recheckMs && !c.reserving) return refused;
        c.waiting += 1;
        try {
          await reserve(clientId, c, deadline);
        } finally {
          c.waiting -= 1;
        }
        // Held tokens are waited for above, within the deadline.
        if (c.tokens === 0 && c.exhausted && c.held === 0) return refused;
      }
    },

    refund(clientId, decision) {
      const c = counters.get(clientId);
      const after = refundTo(c, decision);
      answered(c, decision, settled);
      return after;
    },

    settle: (clientId, decision) => answered(counters.get(clientId), decision, settled),

    flush: (idleMs = 0) => giveBackIdle(counters, { windowSeconds, idleMs, subtract: counts.subtract, warn }),
  };
}

/** RateLimiter.flush: the unspent tokens of keys idle for `idleMs` go back to the database; past windows' counters go. */
async function giveBackIdle(
  counters: Map<string, Counter>,
  { windowSeconds, idleMs, subtract, warn }: { windowSeconds: number; idleMs: number; subtract: WindowCounts['subtract']; warn: Warn },
): Promise<void> {
  // Runs as the counter's reservation: a request that comes meanwhile waits for it (take), then reserves
  // out of a count that has the tokens back, rather than being refused while they are on their way.
  const giveBack = (clientId: string, c: Counter) =>
    (c.reserving = (async () => {
      const n = c.tokens;
      c.tokens = 0;
      try {
        await subtract(clientId, c.window, n);
        c.total -= n;
        // The window has room again, as far as this process knows: the next request asks the database.
        c.exhausted = false;
      } catch (err) {
        // Kept, to be given back or spent later.
        c.tokens += n;
        warn(err, 'could not give back unspent requests; retrying');
      } finally {
        c.reserving = undefined;
      }
    })());
  const current = Math.floor(Date.now() / 1000 / windowSeconds);
  await Promise.all(
    [...counters].map(async ([clientId, c]) => {
      // A past window's tokens expired with it (and requests waiting on its held tokens look again).
      if (c.window < current) {
        if (!c.reserving) counters.delete(clientId);
        wake(c);
        return;
      }
      if (c.tokens > 0 && !c.reserving && Date.now() - c.usedAt >= idleMs) await giveBack(clientId, c);
    }),
  );
}

/** Deletes the counts of windows that ended over a day ago. */
export async function sweepPastWindows(sql: Sql): Promise<void> {
  await withDeadline(sql`DELETE FROM rate_limit_counts WHERE window_start < extract(epoch FROM now()) - 86400`);
}
