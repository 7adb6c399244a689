import type { Logger } from '../../ops/logger';
import { type Sql, onlyRow } from './db';
import { NotReadyError, isDatabaseUnavailable } from '../errors';
import { migrate } from './migrate';

/** A database this service must not run on: the process stops with this, it is not retried. */
export class UnsafeDatabaseError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UnsafeDatabaseError';
  }
}

/**
 * A 201 promises the pet is stored. With fsync or synchronous_commit off PostgreSQL
 * acknowledges commits it can still lose in a crash, so the service refuses such a server.
 */
export async function checkDurability(sql: Sql): Promise<void> {
  const { fsync } = onlyRow(await sql<{ fsync: string }[]>`SELECT current_setting('fsync') AS fsync`, 'current_setting');
  const { commit } = onlyRow(await sql<{ commit: string }[]>`SELECT current_setting('synchronous_commit') AS commit`, 'current_setting');
  const problems = [...(fsync === 'off' ? ['fsync is off'] : []), ...(commit === 'off' ? ['synchronous_commit is off'] : [])];
  if (problems.length > 0) {
    throw new UnsafeDatabaseError(
      `Refusing to serve: on this database ${problems.join(' and ')}, so a pet acknowledged with 201 could be lost in a crash. ` +
        'Turn them on (ALTER SYSTEM SET fsync = on; ALTER SYSTEM SET synchronous_commit = on; then reload), ' +
        'and check that no ALTER ROLE/DATABASE … SET turns them off for this connection.',
    );
  }
}

export interface DatabasePreparation {
  /** Resolves with the migrations applied once the database is usable; rejects only on an UnsafeDatabaseError or a migration conflict. */
  done: Promise<number[]>;
  /** Throws NotReadyError until the database is prepared. Cheap: called on every request that touches the database. */
  assertReady: () => void;
  /**
   * Why the database is not ready yet, as a reason code for answers (`connecting`,
   * `database_unreachable`, `database_refused`, `pooler_refused`), or undefined once it is. The
   * database's own words go to the log only: a keyless /readyz must not publish them.
   */
  pendingReason: () => NotReadyReason | undefined;
  /** Stops retrying (on shutdown). */
  cancel(): void;
}

export type NotReadyReason = 'connecting' | 'database_unreachable' | 'database_refused' | 'pooler_refused' | 'database_failover';

/**
 * Why the database cannot be used, as it is: unreachable (nothing answers), or answering and
 * refusing (a protocol or configuration error, such as a pooler refusing a startup parameter).
 * `reason` is for answers; `text`, with the database's own words, for the log.
 */
export function whyUnavailable(err: unknown): { reason: NotReadyReason; text: string } {
  const code = (err as { code?: string }).code;
  const message = err instanceof Error ? err.message : String(err);
  if (code === '08P01')
    return {
      reason: 'pooler_refused',
      text: `the database, or a pooler in front of it, refused the connection: "${message}" (08P01, protocol violation); behind a transaction-mode pooler such as PgBouncer, set DATABASE_POOL_MODE=transaction`,
    };
  // postgres.js (patch 022): every host answered, and none is what target_session_attrs asks for (a standby, a read-only server).
  if (code === 'TARGET_SESSION_ATTRS')
    return { reason: 'database_failover', text: `no server of DATABASE_URL takes writes now (${message})` };
  if (code !== undefined && /^(08|28|3D|53|57)/.test(code))
    return { reason: 'database_refused', text: `the database refused the connection: "${message}" (${code})` };
  return { reason: 'database_unreachable', text: `the database is unreachable (${code ?? message})` };
}

export interface PrepareOptions {
  logger: Logger;
  /**
   * fsync or synchronous_commit off: `refuse` fails start-up, `warn` logs an error and serves,
   * `skip` does not look (the embedded PGlite, which runs without fsync, warns of it itself).
   */
  onUnsafe: 'refuse' | 'warn' | 'skip';
  retryMs?: number;
}

/**
 * Migrates the database and checks it is safe, retrying for as long as it is unreachable:
 * the process serves from the start (503 with Retry-After until this is done, /readyz not
 * ready) and needs no restart when the database appears.
 */
export function prepareDatabase(sql: Sql, { logger, onUnsafe, retryMs = 500 }: PrepareOptions): DatabasePreparation {
  // Why the database is not ready yet; undefined once it is.
  let reason: NotReadyReason | undefined = 'connecting';
  let cancelled = false;
  let timer: NodeJS.Timeout | undefined;
  const started = Date.now();

  const done = new Promise<number[]>((resolve, reject) => {
    let attempts = 0;
    const attempt = async () => {
      attempts += 1;
      try {
        if (onUnsafe !== 'skip') {
          await checkDurability(sql).catch((err: unknown) => {
            if (!(err instanceof UnsafeDatabaseError) || onUnsafe === 'refuse') throw err;
            logger.error(`${err.message} Serving anyway, because ON_UNSAFE_DATABASE=warn.`);
          });
        }
        const applied = await migrate(sql);
        reason = undefined;
        if (attempts > 1) logger.info({ attempts, waitedMs: Date.now() - started }, 'database reachable: serving');
        resolve(applied);
      } catch (err) {
        if (!isDatabaseUnavailable(err)) return reject(err instanceof Error ? err : new Error(String(err)));
        const why = whyUnavailable(err);
        reason = why.reason;
        // Once, then every 20th attempt (about every 10 s): the outage is visible without flooding the log.
        if (attempts % 20 === 1)
          logger.warn({ attempts, code: (err as { code?: string }).code, reason }, `${why.text}: answering 503 and retrying`);
        if (!cancelled) timer = setTimeout(() => void attempt(), retryMs);
      }
    };
    void attempt();
  });
  // The owner awaits `done`; this keeps an early rejection from being reported as unhandled.
  done.catch(() => {});

  return {
    done,
    assertReady: () => {
      if (reason !== undefined) throw new NotReadyError(`The service is starting (${reason}); retry shortly`);
    },
    pendingReason: () => reason,
    cancel() {
      cancelled = true;
      clearTimeout(timer);
    },
  };
}
