import { type Sql, onlyRow, withDeadline } from './db';
import type { Deadline } from './deadline';
import { NotReadyError, isDatabaseUnavailable } from '../errors';
import { readMigrations } from './migrate';

export interface HealthCheck {
  /** The last migration applied to the database, and the last one this build knows. */
  migrations(deadline?: Deadline): Promise<{ applied: number; known: number }>;
}

/**
 * `pendingReason`: why start-up has not finished preparing the database, if it has not.
 * `followsPrimary`: the pool connects only to a server that takes writes (DATABASE_URL's
 * target_session_attrs), so a database that cannot be had means no such server is there now.
 */
export function createHealthCheck(
  sql: Sql,
  pendingReason: () => string | undefined = () => undefined,
  { followsPrimary = false, known = readMigrations().at(-1)?.version ?? 0 }: { followsPrimary?: boolean; known?: number } = {},
): HealthCheck {
  return {
    async migrations(deadline) {
      const pending = pendingReason();
      // A reason code, never the database's own words (they are in the log): /readyz needs no key.
      if (pending !== undefined) throw new NotReadyError(`Not ready: ${pending}`);
      let row: { version: number; readOnly: boolean };
      try {
        row = onlyRow(
          // serving_primary() (migration 10, applied before start-up ends) refuses as the reads do on a primary
          // a standby may have been promoted over; it runs once, as the aggregate's only row is made.
          await withDeadline(
            sql<{ version: number; readOnly: boolean }[]>`
              SELECT coalesce(max(version), 0)::int AS version, current_setting('transaction_read_only') = 'on' AS "readOnly",
                serving_primary() AS serving
              FROM schema_migrations`,
            deadline,
          ),
          'max(version)',
        );
      } catch (err) {
        const { code } = err as { code?: string };
        // 42P01 undefined_table: no migration has ever run here.
        if (code === '42P01') return { applied: 0, known };
        if (code === 'SR503')
          throw new NotReadyError('Not ready: database_failover (no synchronous standby streams from the primary)', { cause: err });
        if (followsPrimary && isDatabaseUnavailable(err))
          throw new NotReadyError('Not ready: database_failover (no server of DATABASE_URL takes writes now)', { cause: err });
        throw err;
      }
      // A server promoted but not yet taking writes (pg_auto_failover holds a new primary read-only
      // until the old one is demoted): reads work there, creates do not.
      if (followsPrimary && row.readOnly)
        throw new NotReadyError('Not ready: database_failover (the primary of DATABASE_URL does not take writes yet)');
      return { applied: row.version, known };
    },
  };
}
