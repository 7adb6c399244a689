import type { WriteSql } from '../write/transaction';
import type { components } from '../../../generated/openapi';
import { type WriteTransaction, commitWithin, writeColumns } from '../write/commit';
import { type Sql, withDeadline } from '../database/db';
import type { Deadline } from '../database/deadline';
import { randomBase62 } from '../keys/format';
import { randomBytes } from 'node:crypto';
import { RefusedTargetError, TooManyEndpointsError } from '../errors';
import { refusedUrl } from './targets';

type Endpoint = components['schemas']['WebhookEndpoint'];
type NewEndpoint = components['schemas']['NewWebhookEndpoint'];
type EndpointDetail = components['schemas']['WebhookEndpointDetail'];
type Rotated = components['schemas']['RotatedWebhookSecret'];

/** A signing secret as its owner is given it (Standard Webhooks): `whsec_` and the base64 of its 32 bytes, the HMAC key. */
const newSecret = (): Buffer => randomBytes(32);
export const secretText = (secret: Buffer): string => `whsec_${secret.toString('base64')}`;

/** A client has at most this many endpoints (not counting deleted ones). */
export const MAX_ENDPOINTS_PER_CLIENT = 20;
/** How long a rotated-out secret keeps signing beside its successor. */
export const SECRET_GRACE_HOURS = 24;
/** Attempts GET shows, newest first. */
export const RECENT_ATTEMPTS = 10;

/** The endpoints of one client, as the API serves them: another client's never seen, never changed. */
export interface WebhookEndpointStore {
  list(clientId: string, deadline?: Deadline): Promise<Endpoint[]>;
  /** Throws RefusedTargetError (a URL events are never sent to) before anything else, and TooManyEndpointsError. */
  create(clientId: string, endpoint: NewEndpoint, deadline?: Deadline): Promise<Endpoint & { secret: string }>;
  get(clientId: string, id: string, deadline?: Deadline): Promise<EndpointDetail | undefined>;
  /** False when the client has no such endpoint. */
  remove(clientId: string, id: string, deadline?: Deadline): Promise<boolean>;
  rotateSecret(clientId: string, id: string, deadline?: Deadline): Promise<Rotated | undefined>;
}

const iso = (q: Sql, column: string) => q`to_char(${q(column)} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/**
 * An endpoint's columns under the API's names (`description` and `disabledReason` only when set).
 * `events` travels as JSON: the pool reads no array type (connect(), fetch_types).
 */
const endpointColumns = (q: Sql) =>
  q`id, url, to_jsonb(events) AS events, description, CASE WHEN disabled_at IS NULL THEN 'enabled' ELSE 'disabled' END AS status,
    disabled_reason AS "disabledReason", ${iso(q, 'created_at')} AS "createdAt"`;

type EndpointRow = Omit<Endpoint, 'description' | 'disabledReason'> & { description: string | null; disabledReason: string | null };

/** A row as the contract has it: absent, not null, where nothing is set. */
export function endpointOf({ description, disabledReason, ...rest }: EndpointRow): Endpoint {
  return { ...rest, ...(description !== null && { description }), ...(disabledReason !== null && { disabledReason }) };
}

/** The endpoint's row, updated or inserted by this transaction: its proof of commit (commitWithin). */
const wroteRow = (xid: string, pid: number, id: string, createdAt: string): WriteTransaction => ({
  xid,
  pid,
  row: { table: 'webhook_endpoints', id, createdAt },
});

type Written = { xid: string; pid: number; createdAtText: string };

async function insertEndpoint(tx: WriteSql, clientId: string, { url, events, description }: NewEndpoint) {
  // One client's creates one at a time, so that the bound holds under concurrency.
  await tx`SELECT pg_advisory_xact_lock(hashtextextended(${clientId}, 727003))`;
  const secret = newSecret();
  const rows = await tx<(EndpointRow & Written)[]>`
    INSERT INTO webhook_endpoints (id, client_id, url, events, description, secret)
    SELECT ${`we_${randomBase62(16)}`}, ${clientId}, ${url}, ARRAY(SELECT jsonb_array_elements_text(${JSON.stringify(events)}::text::jsonb)), ${description ?? null}, ${secret}
    WHERE (SELECT count(*) FROM webhook_endpoints WHERE client_id = ${clientId} AND deleted_at IS NULL) < ${MAX_ENDPOINTS_PER_CLIENT}
    RETURNING ${endpointColumns(tx)}, ${writeColumns(tx)}, created_at::text AS "createdAtText"`;
  const [row] = rows;
  if (!row) throw new TooManyEndpointsError(MAX_ENDPOINTS_PER_CLIENT);
  const { xid, pid, createdAtText, ...endpoint } = row;
  return { result: { ...endpointOf(endpoint), secret: secretText(secret) }, wrote: wroteRow(xid, pid, endpoint.id, createdAtText) };
}

export interface WebhookEndpointStoreOptions {
  /** WEBHOOK_ALLOW_PRIVATE_TARGETS: `http` and private addresses allowed (development, tests). */
  allowPrivateTargets: boolean;
  assertReady?: () => void;
  resolveMs?: number;
}

export function createWebhookEndpointStore(
  sql: Sql,
  { allowPrivateTargets, assertReady = () => {}, resolveMs }: WebhookEndpointStoreOptions,
): WebhookEndpointStore {
  return {
    async list(clientId, deadline) {
      assertReady();
      const rows = await withDeadline(
        sql<EndpointRow[]>`
          SELECT ${endpointColumns(sql)} FROM webhook_endpoints
          WHERE client_id = ${clientId} AND deleted_at IS NULL
          ORDER BY created_at, id`,
        deadline,
      );
      return rows.map(endpointOf);
    },

    async create(clientId, endpoint, deadline) {
      const refused = refusedUrl(endpoint.url, allowPrivateTargets);
      if (refused !== undefined) throw new RefusedTargetError(refused);
      assertReady();
      return commitWithin(sql, deadline, (tx) => insertEndpoint(tx, clientId, endpoint), { resolveMs });
    },

    async get(clientId, id, deadline) {
      assertReady();
      const [row] = await withDeadline(
        sql<(EndpointRow & { recentAttempts: EndpointDetail['recentAttempts'] })[]>`
          SELECT ${endpointColumns(sql)}, coalesce((
            SELECT json_agg(json_strip_nulls(json_build_object(
              'eventId', a.event_id, 'at', ${iso(sql, 'a.at')}, 'outcome', a.outcome, 'status', a.status,
              'durationMs', a.duration_ms, 'error', a.error)) ORDER BY a.id DESC)
            FROM (SELECT * FROM webhook_attempts WHERE endpoint_id = e.id ORDER BY id DESC LIMIT ${RECENT_ATTEMPTS}) a
          ), '[]') AS "recentAttempts"
          FROM webhook_endpoints e
          WHERE id = ${id} AND client_id = ${clientId} AND deleted_at IS NULL`,
        deadline,
      );
      if (!row) return undefined;
      const { recentAttempts, ...endpoint } = row;
      return { ...endpointOf(endpoint), recentAttempts };
    },

    async remove(clientId, id, deadline) {
      assertReady();
      return commitWithin(
        sql,
        deadline,
        async (tx) => {
          const [row] = await tx<Written[]>`
            UPDATE webhook_endpoints SET deleted_at = now()
            WHERE id = ${id} AND client_id = ${clientId} AND deleted_at IS NULL
            RETURNING ${writeColumns(tx)}, created_at::text AS "createdAtText"`;
          return { result: row !== undefined, wrote: row && wroteRow(row.xid, row.pid, id, row.createdAtText) };
        },
        { resolveMs },
      );
    },

    async rotateSecret(clientId, id, deadline) {
      assertReady();
      const secret = newSecret();
      return commitWithin(
        sql,
        deadline,
        async (tx) => {
          const [row] = await tx<(Written & { previousSecretExpiresAt: string })[]>`
            UPDATE webhook_endpoints
            SET previous_secret = secret, secret = ${secret},
                previous_secret_expires_at = now() + make_interval(hours => ${SECRET_GRACE_HOURS})
            WHERE id = ${id} AND client_id = ${clientId} AND deleted_at IS NULL
            RETURNING ${iso(tx, 'previous_secret_expires_at')} AS "previousSecretExpiresAt", ${writeColumns(tx)},
                      created_at::text AS "createdAtText"`;
          if (!row) return { result: undefined };
          return {
            result: { secret: secretText(secret), previousSecretExpiresAt: row.previousSecretExpiresAt },
            wrote: wroteRow(row.xid, row.pid, id, row.createdAtText),
          };
        },
        { resolveMs },
      );
    },
  };
}

/** Sweeps: events (with their deliveries) and attempts past their retention, endpoints deleted a day ago. */
export const EVENT_RETENTION_DAYS = 30;
export async function sweepWebhooks(sql: Sql): Promise<void> {
  await withDeadline(sql`DELETE FROM webhook_events WHERE created_at < now() - make_interval(days => ${EVENT_RETENTION_DAYS})`);
  await withDeadline(sql`DELETE FROM webhook_attempts WHERE at < now() - make_interval(days => ${EVENT_RETENTION_DAYS})`);
  await withDeadline(sql`DELETE FROM webhook_endpoints WHERE deleted_at < now() - interval '1 day'`);
}
