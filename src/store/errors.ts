/**
 * What the store can fail with, in its own words. The store knows nothing of HTTP: the one
 * error mapping (`toHttpError`) turns these into statuses and Error bodies.
 */

/** A failure that is the database's state, not the request's: retrying shortly may succeed. */
export class DatabaseUnavailableError extends Error {
  /** The driver's or PostgreSQL's code (ECONNREFUSED, 57P01, …), kept for the log line. */
  readonly code: string | undefined;
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'DatabaseUnavailableError';
    this.code = (options?.cause as { code?: string } | undefined)?.code;
  }
}

/** The request's deadline passed before the database answered. */
export class DeadlineExceededError extends DatabaseUnavailableError {
  constructor() {
    super('The database did not answer within the request deadline; retry shortly');
    this.name = 'DeadlineExceededError';
  }
}

/** Start-up has not finished preparing the database (connecting, migrating), or a migration is missing. */
export class NotReadyError extends DatabaseUnavailableError {
  constructor(reason: string, options?: { cause?: unknown }) {
    super(reason, options);
    this.name = 'NotReadyError';
  }
}

/**
 * A write whose COMMIT was sent and whose outcome could not be learnt (the connection failed,
 * and the database could not be asked in time): it may have committed. Not a DatabaseUnavailableError,
 * whose 503 says nothing happened.
 */
export class CommitOutcomeUnknownError extends Error {
  constructor(options?: { cause?: unknown }) {
    super('The database did not say whether the write was committed', options);
    this.name = 'CommitOutcomeUnknownError';
  }
}

/** Another request holding the same Idempotency-Key is still being processed. */
export class IdempotencyKeyInUseError extends Error {
  constructor() {
    super('A request with this Idempotency-Key is still being processed; retry after it completes');
    this.name = 'IdempotencyKeyInUseError';
  }
}

/** The Idempotency-Key was used before with another request body. */
export class IdempotencyKeyReusedError extends Error {
  constructor() {
    super('This Idempotency-Key was already used with a different request body; use a new key for a new request');
    this.name = 'IdempotencyKeyReusedError';
  }
}

/** A walk's filters as a cursor's message names them: "with status=sold and categoryId=3", "without a filter". */
function filtersOf({ status, categoryId }: { status: string | undefined; categoryId?: number | undefined }): string {
  const named = [status === undefined ? [] : [`status=${status}`], categoryId === undefined ? [] : [`categoryId=${categoryId}`]].flat();
  return named.length === 0 ? 'without a filter' : `with ${named.join(' and ')}`;
}

/**
 * A page cursor this service did not issue (altered, truncated, invented), or one issued for a
 * walk with other filters: `issuedFor` is that walk's filters when the cursor is genuine.
 */
export class InvalidCursorError extends Error {
  constructor(readonly issuedFor?: { status: string | undefined; categoryId?: number | undefined }) {
    super(issuedFor === undefined ? 'is not a cursor this service issued' : `was issued for a walk ${filtersOf(issuedFor)}`);
    this.name = 'InvalidCursorError';
  }
}

// Connection-level failures (postgres.js codes and Node socket errors) and the
// SQLSTATEs PostgreSQL uses when it cannot serve right now: the request may be retried.
const UNAVAILABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EPIPE',
  'CONNECT_TIMEOUT',
  'CONNECTION_CLOSED',
  'CONNECTION_ENDED',
  'CONNECTION_DESTROYED',
  // postgres.js (patch 022): no host of DATABASE_URL is what its target_session_attrs asks for (a failover under way).
  'TARGET_SESSION_ATTRS',
  '57P01', // admin_shutdown
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now
  '57014', // query_canceled (statement_timeout)
  '25006', // read_only_sql_transaction: a standby (a failover under way); the connection is dropped
  // serving_primary() (migration 10): a primary with synchronous standbys configured and none streaming
  // from it, which a promoted standby may have replaced: it answers no read, and acknowledges no write.
  'SR503',
  // invalid_sql_statement_name, "prepared statement … does not exist": the statement never ran (its
  // Bind failed). postgres.js prepares it again on a retry, but reports this first error when the
  // retry fails too, as it does on a server going down during a failover (seen in CI: a create's
  // COMMIT status check answered 500 instead of being asked again of the promoted server).
  '26000',
  '53300', // too_many_connections
  '40001', // serialization_failure
  '40P01', // deadlock_detected
]);

/** True for a driver or server error that says the database cannot serve right now. */
export function isDatabaseUnavailable(err: unknown): boolean {
  if (err instanceof DatabaseUnavailableError) return true;
  if (typeof err !== 'object' || err === null) return false;
  const code = (err as { code?: unknown }).code;
  if (typeof code !== 'string') return false;
  // SQLSTATE class 08: connection exception.
  return UNAVAILABLE_CODES.has(code) || /^08[0-9A-Z]{3}$/.test(code);
}

/** A client already has as many webhook endpoints as it may (`max`). */
export class TooManyEndpointsError extends Error {
  constructor(max: number) {
    super(`A client has at most ${max} webhook endpoints; delete one first`);
    this.name = 'TooManyEndpointsError';
  }
}

/** A webhook endpoint's URL that events are never sent to (`reason`: why, as a sentence's end). */
export class RefusedTargetError extends Error {
  constructor(readonly reason: string) {
    super(`The webhook endpoint's URL ${reason}`);
    this.name = 'RefusedTargetError';
  }
}
