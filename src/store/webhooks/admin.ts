import type { Sql } from '../database/db';

/** An endpoint as the operator sees it (every client's; never a secret). */
export interface EndpointListing {
  id: string;
  clientId: string;
  url: string;
  events: string[];
  status: 'enabled' | 'disabled';
  disabledReason: string | null;
  pending: number;
  failed: number;
  lastAttempt: string | null;
}

/** One delivery of an endpoint, for `npm run webhooks -- deliveries`. */
export interface DeliveryListing {
  eventId: string;
  state: 'pending' | 'delivered' | 'failed';
  attempts: number;
  dueAt: Date;
  finishedAt: Date | null;
  lastOutcome: string | null;
  lastStatus: number | null;
}

/** An endpoint or event the operator named that does not exist. */
export class WebhookCommandError extends Error {}

export async function listAllEndpoints(sql: Sql): Promise<EndpointListing[]> {
  return sql<EndpointListing[]>`
    SELECT e.id, e.client_id AS "clientId", e.url, to_jsonb(e.events) AS events,
      CASE WHEN e.disabled_at IS NULL THEN 'enabled' ELSE 'disabled' END AS status, e.disabled_reason AS "disabledReason",
      (SELECT count(*)::int FROM webhook_deliveries d WHERE d.endpoint_id = e.id AND d.state = 'pending') AS pending,
      (SELECT count(*)::int FROM webhook_deliveries d WHERE d.endpoint_id = e.id AND d.state = 'failed') AS failed,
      (SELECT a.outcome || coalesce(' ' || a.status, '') || ' at ' || a.at::text FROM webhook_attempts a
        WHERE a.endpoint_id = e.id ORDER BY a.id DESC LIMIT 1) AS "lastAttempt"
    FROM webhook_endpoints e
    WHERE e.deleted_at IS NULL
    ORDER BY e.client_id, e.created_at, e.id`;
}

/** Disables (with the reason the owner sees) or enables an endpoint; enabling clears its failing streak, and what waits is delivered. */
export async function setEndpointEnabled(sql: Sql, id: string, enabled: boolean, reason?: string): Promise<void> {
  const rows = enabled
    ? await sql`
        UPDATE webhook_endpoints SET disabled_at = NULL, disabled_reason = NULL, failing_since = NULL
        WHERE id = ${id} AND deleted_at IS NULL RETURNING id`
    : await sql`
        UPDATE webhook_endpoints SET disabled_at = coalesce(disabled_at, now()), disabled_reason = ${reason ?? 'Disabled by an operator'}
        WHERE id = ${id} AND deleted_at IS NULL RETURNING id`;
  if (rows.length === 0) throw new WebhookCommandError(`No webhook endpoint has id ${id}`);
}

/**
 * Sends an event again (with a fresh timestamp and signature; the same `webhook-id` and body): to
 * every endpoint it was for, or to `endpointId` (which it need not have been for, if subscribed
 * now). Returns the endpoints it is queued for.
 */
export async function replayEvent(sql: Sql, eventId: string, endpointId?: string): Promise<string[]> {
  const [event] = await sql`SELECT id FROM webhook_events WHERE id = ${eventId}`;
  if (!event) throw new WebhookCommandError(`No event has id ${eventId} (events are kept 30 days)`);
  const rows =
    endpointId === undefined
      ? await sql<{ endpointId: string }[]>`
          UPDATE webhook_deliveries SET state = 'pending', due_at = now(), finished_at = NULL
          WHERE event_id = ${eventId} RETURNING endpoint_id AS "endpointId"`
      : await sql<{ endpointId: string }[]>`
          INSERT INTO webhook_deliveries (endpoint_id, event_id)
          SELECT id, ${eventId} FROM webhook_endpoints WHERE id = ${endpointId} AND deleted_at IS NULL
          ON CONFLICT (endpoint_id, event_id) DO UPDATE SET state = 'pending', due_at = now(), finished_at = NULL
          RETURNING endpoint_id AS "endpointId"`;
  if (endpointId !== undefined && rows.length === 0) throw new WebhookCommandError(`No webhook endpoint has id ${endpointId}`);
  return rows.map((r) => r.endpointId);
}

/** The endpoint's last `limit` deliveries, newest event first, with each one's last attempt. */
export async function listDeliveries(sql: Sql, endpointId: string, limit = 50): Promise<DeliveryListing[]> {
  const [endpoint] = await sql`SELECT id FROM webhook_endpoints WHERE id = ${endpointId}`;
  if (!endpoint) throw new WebhookCommandError(`No webhook endpoint has id ${endpointId}`);
  return sql<DeliveryListing[]>`
    SELECT d.event_id AS "eventId", d.state, d.attempts, d.due_at AS "dueAt", d.finished_at AS "finishedAt",
      a.outcome AS "lastOutcome", a.status AS "lastStatus"
    FROM webhook_deliveries d
    JOIN webhook_events v ON v.id = d.event_id
    LEFT JOIN LATERAL (
      SELECT outcome, status FROM webhook_attempts
      WHERE endpoint_id = d.endpoint_id AND event_id = d.event_id ORDER BY id DESC LIMIT 1
    ) a ON true
    WHERE d.endpoint_id = ${endpointId}
    ORDER BY v.created_at DESC, d.event_id
    LIMIT ${limit}`;
}
