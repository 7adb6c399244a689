/**
 * npm run db:migrate: applies the pending migrations to DATABASE_URL and prints each.
 * Safe to re-run: what is applied is recorded and skipped. (`npm start` runs the same
 * migrations at start-up; this is for deploy pipelines that migrate first.)
 */
import { migrate, readMigrations } from '../../src/store/database/migrate';
import { connectToDatabaseUrl } from '../lib/database';
import { runTool } from '../lib/tool';

async function main(): Promise<number> {
  const sql = connectToDatabaseUrl('name the PostgreSQL to migrate (the embedded one is migrated by npm start)');
  if (!sql) return 1;
  try {
    const all = readMigrations();
    const applied = await migrate(sql, all);
    for (const m of all.filter((x) => applied.includes(x.version))) {
      process.stdout.write(`applied ${String(m.version).padStart(4, '0')}_${m.name}\n`);
    }
    process.stdout.write(
      applied.length
        ? `${applied.length} migration(s) applied; the database is at ${all.at(-1)?.version}\n`
        : `up to date: the database is at ${all.at(-1)?.version}\n`,
    );
    return 0;
  } finally {
    await sql.end();
  }
}

runTool('db:migrate failed', () => main());
