import { type Sql, withDeadline } from '../db';
import { readMigrations } from './migrate';

export interface HealthCheck {
  /** The last migration applied to the database, and the last one this build knows. */
  migrations(): Promise<{ applied: number; known: number }>;
}

export function createHealthCheck(sql: Sql, known = readMigrations().at(-1)?.version ?? 0): HealthCheck {
  return {
    async migrations() {
      try {
        const [row] = await withDeadline(sql<{ version: number }[]>`SELECT coalesce(max(version), 0)::int AS version FROM schema_migrations`);
        return { applied: row.version, known };
      } catch (err) {
        // 42P01 undefined_table: no migration has ever run here.
        if ((err as { code?: string }).code === '42P01') return { applied: 0, known };
        throw err;
      }
    },
  };
}
