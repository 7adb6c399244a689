import { onlyRow } from '../src/store/db';
import { type TestApp, startTestApp } from './support/harness';

// listPets by status must stay flat as the table grows: an index serves both the filter and
// the id order, so PostgreSQL reads about `limit` rows and sorts nothing (npm run bench --
// --scale measures the p99 at 10,000 and 1,000,000 animals). For a common status the planner
// may instead walk the primary key and filter (as cheap, and as flat); for a rare one only
// pets_status_id_idx keeps it flat, and it must be the one used.
let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
  await t.sql`
    INSERT INTO pets (name, category_id, status)
    SELECT 'Planned ' || g, g % 20, CASE WHEN g % 100 = 0 THEN 'sold' WHEN g % 2 = 0 THEN 'pending' ELSE 'available' END
    FROM generate_series(1, 30000) AS g`;
  await t.sql`ANALYZE pets`;
}, 60_000);
afterAll(() => t.close());

interface PlanNode {
  'Node Type': string;
  'Index Name'?: string;
  Plans?: PlanNode[];
}
const nodes = (n: PlanNode): PlanNode[] => [n, ...(n.Plans ?? []).flatMap(nodes)];

/** The nodes of the plan EXPLAIN (FORMAT JSON) returned. */
const planNodes = (rows: readonly Record<string, unknown>[]): PlanNode[] => {
  const plan = (onlyRow(rows, 'EXPLAIN')['QUERY PLAN'] as { Plan: PlanNode }[] | undefined)?.[0]?.Plan;
  if (!plan) throw new Error('EXPLAIN returned no plan');
  return nodes(plan);
};

const planOf = async (status: string) => {
  // The statement src/store/pets.ts sends for GET /v1/pets?status=…&limit=100
  return planNodes(
    await t.sql.unsafe(
      `EXPLAIN (FORMAT JSON) SELECT id, name, category_id AS "categoryId", status FROM pets WHERE status = $1 ORDER BY id LIMIT $2`,
      [status, 100],
    ),
  );
};

test('when a rare status is listed in id order, then the plan is an index scan on pets_status_id_idx, with no sort', async () => {
  const plan = await planOf('sold');
  expect(plan.map((n) => n['Node Type'])).not.toContain('Sort');
  expect(plan.some((n) => n['Node Type'] === 'Index Scan' && n['Index Name'] === 'pets_status_id_idx')).toBe(true);
});

test('when a common status is listed in id order, then the plan is an index scan, with no sort', async () => {
  const plan = await planOf('available');
  expect(plan.map((n) => n['Node Type'])).not.toContain('Sort');
  expect(plan.some((n) => n['Node Type'] === 'Index Scan')).toBe(true);
});

test('when the list is unfiltered, then the plan is an index scan on the primary key, with no sort', async () => {
  const plan = planNodes(
    await t.sql.unsafe(`EXPLAIN (FORMAT JSON) SELECT id, name, category_id AS "categoryId", status FROM pets ORDER BY id LIMIT $1`, [20]),
  );
  expect(plan.map((n) => n['Node Type'])).not.toContain('Sort');
  expect(plan.some((n) => n['Node Type'] === 'Index Scan' && n['Index Name'] === 'pets_pkey')).toBe(true);
});
