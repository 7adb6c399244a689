import { type Sql, onlyRow } from '../../src/store/database/db';

const BATCH = 10_000;

/**
 * Makes the database hold `count` sample animals ("Sample animal 1" … "Sample animal N",
 * statuses in turn, so each status has a third), inserting only those not there yet, in
 * batches each committed on its own. Returns how many there were before.
 */
export async function seedSampleAnimals(
  sql: Sql,
  count: number,
  onBatch: (done: number, total: number) => void = () => {},
): Promise<number> {
  const { n: existing } = onlyRow(
    await sql<{ n: number }[]>`SELECT count(*)::int AS n FROM pets WHERE name LIKE 'Sample animal %'`,
    'count(*)',
  );
  for (let from = existing + 1; from <= count; from += BATCH) {
    const to = Math.min(from + BATCH - 1, count);
    await sql`
      INSERT INTO pets (name, category_id, status)
      SELECT 'Sample animal ' || g, 1 + g % 20, (ARRAY['available', 'pending', 'sold'])[1 + g % 3]
      FROM generate_series(${from}::bigint, ${to}::bigint) AS g`;
    onBatch(to - existing, count - existing);
  }
  return existing;
}
