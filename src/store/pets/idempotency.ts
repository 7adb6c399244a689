import type { WriteSql } from '../write/transaction';
import type { WriteTransaction } from '../write/commit';
import { type Sql, onlyRow, withDeadline } from '../database/db';
import { IdempotencyKeyInUseError, IdempotencyKeyReusedError } from '../errors';

/** A write made safe to retry: the same client, key and body get the first response again. */
export interface IdempotentRequest {
  /** The client that asked (any of its API keys): one client's keys never meet another's. */
  clientId: string;
  key: string;
  /** SHA-256 of the request body as sent. */
  fingerprint: string;
}

// Namespaces pg_try_advisory_xact_lock keys: a request holding an Idempotency-Key holds its lock.
const IDEMPOTENCY_LOCK_SEED = 727_002;

/**
 * `write`, at most once per Idempotency-Key, inside the caller's transaction `tx`: the write and
 * the record of its response commit together or not at all, so a crash or a 503 never leaves a
 * key that replays nothing or a write without its key. A key held by a request in flight is
 * refused (IdempotencyKeyInUseError); one stored for another body is refused
 * (IdempotencyKeyReusedError); one stored for this body replays the value it recorded.
 */
export async function once<T>(
  tx: WriteSql,
  { clientId, key, fingerprint }: IdempotentRequest,
  ttlSeconds: number,
  write: () => Promise<{ result: T; wrote: WriteTransaction }>,
): Promise<{ result: { value: T; replayed: boolean }; wrote?: WriteTransaction }> {
  const { locked } = onlyRow(
    await tx<{ locked: boolean }[]>`
      SELECT pg_try_advisory_xact_lock(hashtextextended(${clientId} || ':' || ${key}, ${IDEMPOTENCY_LOCK_SEED})) AS locked`,
    'pg_try_advisory_xact_lock',
  );
  if (!locked) throw new IdempotencyKeyInUseError();
  const [earlier] = await tx<{ fingerprint: string; response: string }[]>`
    SELECT fingerprint, response
    FROM idempotency_keys
    WHERE client_id = ${clientId} AND key = ${key} AND expires_at > now()`;
  if (earlier) {
    if (earlier.fingerprint !== fingerprint) throw new IdempotencyKeyReusedError();
    // A replay acknowledges the first create: the record it read must be as durable as a commit.
    // One that committed here while the server crashed, before the synchronous standby had it, is
    // visible after the restart yet lost if the standby is promoted. Writing the record again (the
    // same values) makes this COMMIT wait, as any write's does, for the standby to flush past it,
    // so past the first create too; while no standby takes it, the replay is a 503, never a 201.
    // (A transaction id alone would not: a COMMIT that wrote nothing else does not wait.)
    await tx`UPDATE idempotency_keys SET expires_at = expires_at WHERE client_id = ${clientId} AND key = ${key}`;
    return { result: { value: JSON.parse(earlier.response) as T, replayed: true } };
  }
  const { result, wrote } = await write();
  // An expired record of the same key is replaced.
  await tx`
    INSERT INTO idempotency_keys (client_id, key, fingerprint, status, response, expires_at)
    VALUES (${clientId}, ${key}, ${fingerprint}, 201, ${JSON.stringify(result)}, now() + make_interval(secs => ${ttlSeconds}))
    ON CONFLICT (client_id, key) DO UPDATE
      SET fingerprint = EXCLUDED.fingerprint, status = EXCLUDED.status, response = EXCLUDED.response,
          created_at = now(), expires_at = EXCLUDED.expires_at`;
  return { result: { value: result, replayed: false }, wrote };
}

/** Deletes the records of keys past their time. */
export async function sweepExpiredIdempotencyKeys(sql: Sql): Promise<void> {
  await withDeadline(sql`DELETE FROM idempotency_keys WHERE expires_at < now()`);
}
