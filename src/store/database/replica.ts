import type { Logger } from 'pino';
import { type Sql, withDeadline } from './db';
import { requestDeadline } from './deadline';
import { isDatabaseUnavailable } from '../errors';

/** What /metrics shows of the replica. */
export interface ReplicaStatus {
  /** The replica answered its last check. */
  reachable: boolean;
  /** How far behind the primary it is, in milliseconds (of the primary's WAL it has not replayed). */
  lagMs: number;
  /** Reads served, by where they went. */
  reads: { replica: number; primary: number };
}

export interface ReadRouter {
  /**
   * Runs a read on the replica when it is up and close enough, else on the primary; a read the
   * replica fails to serve (it went down since the last check) runs again on the primary.
   */
  read<T>(query: (q: Sql) => Promise<T>): Promise<T>;
  status(): ReplicaStatus;
  stop(): void;
}

export interface ReplicaOptions {
  /** A replica further behind than this, or not answering, is skipped. */
  maxLagMs: number;
  logger: Logger;
  /** How often the primary's and the replica's WAL positions are compared. */
  everyMs?: number;
}

/** A WAL position (`16/B374D848`) as a number that compares. */
const lsn = (text: string) => {
  const [high = '0', low = '0'] = text.split('/');
  return (BigInt(`0x${high}`) << 32n) + BigInt(`0x${low}`);
};

/** The most positions kept; past it, neighbours are merged so that the lag is never under-read (recordPosition). */
export const MAX_SAMPLES = 1_024;

/**
 * The primary's position `position`, seen at `at`, added to `samples` (oldest first). A position seen before adds
 * nothing. When they are too many, each pair becomes one with the older time and the newer position: a replica
 * that has not replayed it was behind since the older time at least, so the lag read from them can only grow.
 */
export function recordPosition(samples: { at: number; position: bigint }[], at: number, position: bigint): void {
  const last = samples[samples.length - 1];
  if (last && last.position >= position) return;
  samples.push({ at, position });
  if (samples.length <= MAX_SAMPLES) return;
  const merged = [];
  for (let i = 0; i < samples.length; i += 2) {
    const older = samples[i] as { at: number; position: bigint };
    merged.push({ at: older.at, position: (samples[i + 1] ?? older).position });
  }
  samples.splice(0, samples.length, ...merged);
}

/**
 * Reads from a streaming replica while it keeps up. Every `everyMs` the primary's current WAL
 * position is recorded with the time, and the replica's replayed position read: the replica is
 * as far behind as the oldest recorded position it has not replayed (0 when it has replayed
 * them all, as on an idle primary, or when replay is paused with nothing to replay). The
 * primary's position is recorded while the replica does not answer too: one that comes back
 * behind is as far behind as the writes it missed, not as the first position seen on its return.
 * Writes never come here: creates, idempotency records and rate-limit counts use the primary.
 */
export function createReadRouter(primary: Sql, replica: Sql, { maxLagMs, logger, everyMs = 100 }: ReplicaOptions): ReadRouter {
  const samples: { at: number; position: bigint }[] = [];
  let reachable = false;
  let lagMs = Number.POSITIVE_INFINITY;
  const reads = { replica: 0, primary: 0 };
  let usable = false;
  let running = false;

  let sampling = false;
  let primaryAnswers = false;
  const deadline = () => requestDeadline(Math.max(everyMs * 5, 500));
  /** The primary's position now, recorded: on its own, so that a replica out of reach does not hold up the record. */
  const sample = async () => {
    if (sampling) return;
    sampling = true;
    try {
      const [head] = await withDeadline(primary<{ position: string }[]>`SELECT pg_current_wal_lsn()::text AS position`, deadline());
      if (head) recordPosition(samples, Date.now(), lsn(head.position));
      primaryAnswers = true;
    } catch {
      // The replica's lag cannot be known: it is skipped until the primary answers again.
      primaryAnswers = false;
    } finally {
      sampling = false;
    }
  };
  const check = async () => {
    if (running) return;
    running = true;
    try {
      const [state] = await withDeadline(
        replica<{ replayed: string | null; recovering: boolean }[]>`
          SELECT pg_last_wal_replay_lsn()::text AS replayed, pg_is_in_recovery() AS recovering`,
        deadline(),
      );
      const now = Date.now();
      reachable = true;
      if (!primaryAnswers) lagMs = Number.POSITIVE_INFINITY;
      else if (!state?.recovering || state.replayed === null) {
        // Promoted, or not a replica at all: nothing to fall behind.
        samples.length = 0;
        lagMs = state?.recovering ? Number.POSITIVE_INFINITY : 0;
      } else {
        const replayed = lsn(state.replayed);
        // Positions the replica has replayed are history; the oldest one left says how far behind it is.
        while (samples.length && (samples[0] as { position: bigint }).position <= replayed) samples.shift();
        lagMs = samples.length ? now - (samples[0] as { at: number }).at : 0;
      }
    } catch (err) {
      if (reachable) logger.warn({ err }, 'the read replica does not answer: reads go to the primary');
      reachable = false;
      lagMs = Number.POSITIVE_INFINITY;
    } finally {
      const wasUsable = usable;
      usable = reachable && lagMs <= maxLagMs;
      if (wasUsable && !usable && reachable)
        logger.warn({ lagMs }, `the read replica is more than ${maxLagMs} ms behind: reads go to the primary`);
      if (!wasUsable && usable) logger.info({ lagMs }, 'the read replica keeps up: reads go to it');
      running = false;
    }
  };
  const tick = () => {
    void sample();
    void check();
  };
  tick();
  const timer = setInterval(tick, everyMs);
  timer.unref();

  return {
    async read(query) {
      if (!usable) {
        reads.primary += 1;
        return query(primary);
      }
      try {
        const result = await query(replica);
        reads.replica += 1;
        return result;
      } catch (err) {
        if (!isDatabaseUnavailable(err)) throw err;
        // Down since the last check: skip it until a check finds it answering again.
        usable = false;
        reachable = false;
        // Not known until a check finds it answering: what the last check measured is not its lag now.
        lagMs = Number.POSITIVE_INFINITY;
        logger.warn({ err }, 'the read replica failed a read: reads go to the primary');
        reads.primary += 1;
        return query(primary);
      }
    },
    status: () => ({ reachable, lagMs: reachable && Number.isFinite(lagMs) ? lagMs : -1, reads: { ...reads } }),
    stop: () => clearInterval(timer),
  };
}
