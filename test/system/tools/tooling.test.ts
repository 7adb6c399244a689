import { readdirSync } from 'node:fs';
import { migrationsDir } from '../../../src/paths';
import { type Sql, connect, onlyRow } from '../../../src/store/database/db';
import { type TestDatabase, freshDatabase } from '../../support/databases';
import { npmRun as runNpm } from '../../support/processes';

// The data scripts as an operator runs them: npm run db:migrate / db:seed against DATABASE_URL.
// Spawned asynchronously: the embedded test database may be served by this very process.
let db: TestDatabase;
let sql: Sql;
beforeAll(async () => {
  db = await freshDatabase();
  sql = connect(db.url, { max: 1 });
});
afterAll(async () => {
  await sql.end();
  await db.drop();
});

const npmRun = (script: string, args: string[] = [], env: Record<string, string | undefined> = { DATABASE_URL: db.url }) =>
  runNpm(script, args, env);
const count = async () => onlyRow(await sql<{ n: number }[]>`SELECT count(*)::int AS n FROM pets`, 'count(*)').n;

describe('npm run db:migrate', () => {
  test('when db:migrate runs twice, then it applies the migrations, printing each, and then finds nothing to do', async () => {
    const first = await npmRun('db:migrate');
    expect(first.status).toBe(0);
    // Every file of the migrations folder, in order, then the count and the version reached.
    const files = readdirSync(migrationsDir)
      .filter((f) => f.endsWith('.sql'))
      .sort();
    expect(files.length).toBeGreaterThanOrEqual(9);
    const last = Number(files.at(-1)?.slice(0, 4));
    expect(first.stdout).toContain(
      `${files.map((f) => `applied ${f.replace(/\.sql$/, '')}`).join('\n')}\n${files.length} migration(s) applied; the database is at ${last}`,
    );
    const again = await npmRun('db:migrate');
    expect(again.stdout).toContain(`up to date: the database is at ${last}`);
  }, 30_000);

  test('when DATABASE_URL is unset, then it says what it needs', async () => {
    const r = await npmRun('db:migrate', [], { DATABASE_URL: undefined });
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('DATABASE_URL is not set');
  }, 30_000);
});

describe('npm run db:seed', () => {
  test('when db:seed runs twice, then it seeds 10,000 animals in batches with progress, and the second run adds none', async () => {
    const first = await npmRun('db:seed', ['--count', '10000']);
    expect(first.status).toBe(0);
    expect(first.stdout).toContain('[##############################] 10000/10000');
    expect(first.stdout).toMatch(/10000 sample animals \(10000 added in [\d.]+ s\); 10000 animals in all/);
    expect(await count()).toBe(10000);
    const statuses = await sql<
      { status: string; n: number }[]
    >`SELECT status, count(*)::int AS n FROM pets GROUP BY status ORDER BY status`;
    expect(statuses.map((r) => ({ ...r }))).toEqual([
      { status: 'available', n: 3333 },
      { status: 'pending', n: 3334 },
      { status: 'sold', n: 3333 },
    ]);

    const again = await npmRun('db:seed', ['--count', '10000']);
    expect(again.stdout).toMatch(/10000 sample animals \(0 added/);
    expect(await count()).toBe(10000);

    const more = await npmRun('db:seed', ['--count', '12000']);
    expect(more.stdout).toMatch(/12000 sample animals \(2000 added/);
    expect(await count()).toBe(12000);
  }, 60_000);

  test('when the count is not a whole number, then it is refused with the usage', async () => {
    const r = await npmRun('db:seed', ['--count', 'many']);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('usage: npm run db:seed -- --count N');
  }, 30_000);
});
