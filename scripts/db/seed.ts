/**
 * npm run db:seed -- --count N: makes DATABASE_URL hold N sample animals ("Sample animal 1"
 * … "Sample animal N", statuses in turn), inserting only those not there yet, in batches,
 * each committed on its own. Safe to re-run or to interrupt and run again.
 */
import { onlyRow } from '../../src/store/database/db';
import { migrate } from '../../src/store/database/migrate';
import { seedSampleAnimals } from './sampleAnimals';
import { connectToDatabaseUrl } from '../lib/database';
import { runTool } from '../lib/tool';

function progress(done: number, total: number): void {
  const width = 30;
  const filled = total === 0 ? width : Math.round((done / total) * width);
  const line = `[${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${done}/${total}`;
  // A bar that redraws in a terminal; one line per batch in a log.
  process.stdout.write(process.stdout.isTTY ? `\r${line}` : `${line}\n`);
}

async function main(argv: string[]): Promise<number> {
  const i = argv.indexOf('--count');
  const count = i >= 0 ? Number(argv[i + 1]) : NaN;
  if (!Number.isSafeInteger(count) || count < 0) {
    process.stderr.write('usage: npm run db:seed -- --count N   (N: how many sample animals the database should hold)\n');
    return 2;
  }
  const sql = connectToDatabaseUrl('name the PostgreSQL to seed');
  if (!sql) return 1;
  try {
    await migrate(sql);
    const started = Date.now();
    const existing = await seedSampleAnimals(sql, count, progress);
    if (process.stdout.isTTY && count > existing) process.stdout.write('\n');
    const { n: samples } = onlyRow(
      await sql<{ n: number }[]>`SELECT count(*)::int AS n FROM pets WHERE name LIKE 'Sample animal %'`,
      'count(*)',
    );
    const { n: total } = onlyRow(await sql<{ n: number }[]>`SELECT count(*)::int AS n FROM pets`, 'count(*)');
    const added = Math.max(0, count - existing);
    process.stdout.write(
      `${samples} sample animals (${added} added in ${((Date.now() - started) / 1000).toFixed(1)} s); ${total} animals in all\n`,
    );
    return 0;
  } finally {
    await sql.end();
  }
}

runTool('db:seed failed', () => main(process.argv.slice(2)));
