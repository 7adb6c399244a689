/**
 * npm run db:migrate: applies the pending migrations to DATABASE_URL and prints each.
 * Safe to re-run: what is applied is recorded and skipped. (`npm start` runs the same
 * migrations at start-up; this is for deploy pipelines that migrate first.)
 */
import { loadConfig } from '../../src/config';
import { connect } from '../../src/store/db';
import { migrate, readMigrations } from '../../src/store/migrate';

async function main(): Promise<number> {
  const { databaseUrl, databasePoolMode } = loadConfig(process.env);
  if (!databaseUrl) {
    process.stderr.write('DATABASE_URL is not set: name the PostgreSQL to migrate (the embedded one is migrated by npm start)\n');
    return 1;
  }
  const sql = connect(databaseUrl, { max: 1, poolMode: databasePoolMode });
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

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`db:migrate failed: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  },
);
