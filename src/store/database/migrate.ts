import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { type Sql, transaction } from './db';
import { migrationsDir } from '../../paths';

export interface Migration {
  version: number;
  name: string;
  sql: string;
  checksum: string;
}

/** Numbered, forwards-only plain-SQL files: `0001_create_pets.sql`, `0002_…`. */
export function readMigrations(dir = migrationsDir): Migration[] {
  const migrations = readdirSync(dir)
    .filter((file) => file.endsWith('.sql'))
    .sort()
    .map((file) => {
      const [, version, name] = /^(\d+)_([a-z0-9_]+)\.sql$/.exec(file) ?? [];
      if (version === undefined || name === undefined) throw new Error(`Migration file name must be NNNN_name.sql: ${file}`);
      const sql = readFileSync(path.join(dir, file), 'utf8');
      return { version: Number(version), name, sql, checksum: createHash('sha256').update(sql).digest('hex') };
    });
  migrations.forEach((m, i) => {
    if (m.version !== i + 1) throw new Error(`Migrations must be numbered 1, 2, 3 … without gaps; found ${m.version} at position ${i + 1}`);
  });
  return migrations;
}

// Any fixed number: every instance starting at once takes the same lock, so they migrate one after another.
const MIGRATION_LOCK = 727_001;

/**
 * Applies the pending migrations in one transaction and records each in schema_migrations.
 * Refuses to run when an applied migration's file has changed since: history is never rewritten.
 * Returns the versions it applied.
 */
export async function migrate(sql: Sql, migrations = readMigrations()): Promise<number[]> {
  return transaction(sql, async (tx) => {
    await tx`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK})`;
    await tx`
      CREATE TABLE IF NOT EXISTS schema_migrations (
        version    integer     PRIMARY KEY,
        name       text        NOT NULL,
        checksum   text        NOT NULL,
        applied_at timestamptz NOT NULL DEFAULT now()
      )`;
    const applied = await tx<{ version: number; checksum: string }[]>`SELECT version, checksum FROM schema_migrations ORDER BY version`;
    const known = new Map(migrations.map((m) => [m.version, m]));
    for (const row of applied) {
      const m = known.get(row.version);
      if (!m) throw new Error(`The database has migration ${row.version}, which this code does not know: it is newer than this build`);
      if (m.checksum !== row.checksum)
        throw new Error(`Migration ${row.version} (${m.name}) was edited after it was applied; add a new migration instead`);
    }
    const pending = migrations.filter((m) => !applied.some((a) => a.version === m.version));
    for (const m of pending) {
      await tx.unsafe(m.sql);
      await tx`INSERT INTO schema_migrations (version, name, checksum) VALUES (${m.version}, ${m.name}, ${m.checksum})`;
    }
    return pending.map((m) => m.version);
  });
}
