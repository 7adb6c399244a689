import type { Sql } from '../database/db';
import { withDeadline } from '../database/db';

/** What one attempt met (webhook_attempts.outcome). */
export type Outcome = 'delivered' | 'http_status' | 'timeout' | 'connection_failed' | 'refused_target';

export interface AttemptResult {
  outcome: Outcome;
  /** The receiver's status, when it answered. */
  status?: number;
  durationMs: number;
  /** In the service's words (never the secret, never the receiver's body). */
  error?: string;
}

/** One delivery claimed by a worker: what to send, where, and with which secrets. */
export interface ClaimedDelivery {
  endpointId: string;
  eventId: string;
  /** This attempt's number, from 1. */
  attempt: number;
  url: string;
  /** The secrets that sign: the endpoint's, and the one it replaced while its grace lasts. */
  secrets: Buffer[];
  type: string;
  data: Record<string, unknown>;
  /** When the event was made (ISO 8601, milliseconds, UTC). */
  createdAt: string;
  /** How long ago, by the database's clock. */
  ageMs: number;
  /** The trace of the create that made the event (W3C traceparent), when it was traced. */
  traceContext: string | null;
}

/** What becomes of a delivery after an attempt. */
export type NextStep = { state: 'delivered' } | { state: 'pending'; delayMs: number } | { state: 'failed' };

/** The deliveries as workers claim and settle them: any instance's, one statement each. */
export interface DeliveryQueue {
  /**
   * Up to `limit` due deliveries of enabled endpoints, each made not due again for `leaseMs` (its
   * attempt's longest end, with a margin): if this instance dies, another claims it after that.
   */
  claim(limit: number, leaseMs: number): Promise<ClaimedDelivery[]>;
  /**
   * The attempt's result, its next step, and what it says of the endpoint: one delivered clears
   * its failing streak; one failed starts it, and an endpoint failing for `disableAfterMs` is
   * disabled with the reason. Returns whether the endpoint was disabled by this attempt.
   */
  settle(delivery: ClaimedDelivery, startedAt: Date, result: AttemptResult, next: NextStep, disableAfterMs: number): Promise<boolean>;
  /** Deliveries due now (or overdue) to enabled endpoints, what `claim` would take, and the age of the oldest: the backlog. */
  backlog(): Promise<{ due: number; oldestMs: number }>;
}

/** `3 days`, `5 h`, `90 s`: how long, as an owner reads it. */
const duration = (ms: number) =>
  ms >= 86_400_000
    ? `${Math.round(ms / 86_400_000)} days`
    : ms >= 3_600_000
      ? `${Math.round(ms / 3_600_000)} h`
      : `${Math.round(ms / 1000)} s`;

type ClaimRow = Omit<ClaimedDelivery, 'secrets'> & { secret: Buffer; previousSecret: Buffer | null };

export function createDeliveryQueue(sql: Sql): DeliveryQueue {
  return {
    async claim(limit, leaseMs) {
      // The endpoint is checked row by row as the due index is read in order (a filter, not a
      // join), so the scan stops at `limit` rows whatever the statistics say. Joined, a backlog
      // that grew since the last ANALYZE was planned as a sort of every due row: 30 ms a claim at
      // 12,000 waiting, a drain of 136 deliveries/s (npm run bench -- --webhooks).
      const rows = await withDeadline(
        sql<ClaimRow[]>`
          WITH due AS (
            SELECT d.endpoint_id, d.event_id
            FROM webhook_deliveries d
            WHERE d.state = 'pending' AND d.due_at <= now()
              AND (SELECT e.disabled_at IS NULL AND e.deleted_at IS NULL FROM webhook_endpoints e WHERE e.id = d.endpoint_id)
            ORDER BY d.due_at
            LIMIT ${limit}
            FOR UPDATE OF d SKIP LOCKED
          )
          UPDATE webhook_deliveries d
          SET due_at = now() + make_interval(secs => ${leaseMs / 1000}), attempts = d.attempts + 1
          FROM due, webhook_endpoints e, webhook_events v
          WHERE d.endpoint_id = due.endpoint_id AND d.event_id = due.event_id AND e.id = d.endpoint_id AND v.id = d.event_id
          RETURNING d.endpoint_id AS "endpointId", d.event_id AS "eventId", d.attempts AS attempt, e.url, e.secret,
            CASE WHEN e.previous_secret_expires_at > now() THEN e.previous_secret END AS "previousSecret",
            v.type, v.data, to_char(v.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "createdAt",
            (extract(epoch FROM now() - v.created_at) * 1000)::float8 AS "ageMs", v.trace_context AS "traceContext"`,
      );
      return rows.map(({ secret, previousSecret, ...rest }) => ({
        ...rest,
        secrets: previousSecret === null ? [secret] : [secret, previousSecret],
      }));
    },

    async settle(delivery, startedAt, result, next, disableAfterMs) {
      const delivered = next.state === 'delivered';
      const delaySeconds = next.state === 'pending' ? next.delayMs / 1000 : 0;
      const reason = `Every delivery failed for ${duration(disableAfterMs)}; the last: ${result.error ?? result.outcome}`;
      const [row] = await withDeadline(
        sql<{ disabled: boolean }[]>`
          WITH d AS (
            UPDATE webhook_deliveries
            SET state = ${next.state},
                due_at = CASE WHEN ${next.state} = 'pending' THEN now() + make_interval(secs => ${delaySeconds}) ELSE due_at END,
                finished_at = CASE WHEN ${next.state} = 'pending' THEN NULL ELSE now() END
            WHERE endpoint_id = ${delivery.endpointId} AND event_id = ${delivery.eventId} AND state = 'pending'
              AND (${delivered} OR attempts = ${delivery.attempt})
          ), e AS (
            UPDATE webhook_endpoints
            SET failing_since = CASE WHEN ${delivered} THEN NULL ELSE coalesce(failing_since, ${startedAt}) END,
                disabled_at = CASE
                  WHEN NOT ${delivered} AND disabled_at IS NULL
                    AND coalesce(failing_since, ${startedAt}) <= now() - make_interval(secs => ${disableAfterMs / 1000})
                  THEN now() ELSE disabled_at END,
                disabled_reason = CASE
                  WHEN NOT ${delivered} AND disabled_at IS NULL
                    AND coalesce(failing_since, ${startedAt}) <= now() - make_interval(secs => ${disableAfterMs / 1000})
                  THEN ${reason} ELSE disabled_reason END
            WHERE id = ${delivery.endpointId} AND (NOT ${delivered} OR failing_since IS NOT NULL)
            RETURNING disabled_at IS NOT NULL AND disabled_at >= ${startedAt} AS disabled
          ), a AS (
            INSERT INTO webhook_attempts (endpoint_id, event_id, at, outcome, status, duration_ms, error)
            SELECT ${delivery.endpointId}, ${delivery.eventId}, ${startedAt}, ${result.outcome}, ${result.status ?? null},
                   ${result.durationMs}, ${result.error === undefined ? null : result.error.slice(0, 500)}
            WHERE EXISTS (SELECT 1 FROM webhook_endpoints WHERE id = ${delivery.endpointId})
          )
          SELECT coalesce((SELECT disabled FROM e), false) AS disabled`,
      );
      return row?.disabled === true;
    },

    async backlog() {
      const [row] = await withDeadline(
        sql<{ due: number; oldestMs: number }[]>`
          SELECT count(*)::int AS due, coalesce(extract(epoch FROM now() - min(d.due_at)) * 1000, 0)::float8 AS "oldestMs"
          FROM webhook_deliveries d
          JOIN webhook_endpoints e ON e.id = d.endpoint_id
          WHERE d.state = 'pending' AND d.due_at <= now() AND e.disabled_at IS NULL AND e.deleted_at IS NULL`,
      );
      return row ?? { due: 0, oldestMs: 0 };
    },
  };
}
