import { onlyRow } from '../../../src/store/database/db';
import { type TestApp, startTestApp } from '../../support/harness';

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
    SELECT 'Planned ' || g, (g / 2) % 20, CASE WHEN g % 100 = 0 THEN 'sold' WHEN g % 2 = 0 THEN 'pending' ELSE 'available' END
    FROM generate_series(1, 30000) AS g`;
  // A rare category, spread through the table: 30 animals.
  await t.sql`UPDATE pets SET category_id = 999 WHERE id % 1000 = 7`;
  await t.sql`ANALYZE pets`;
}, 60_000);
afterAll(() => t.close());

interface PlanNode {
  'Node Type': string;
  'Index Name'?: string;
  'Index Cond'?: string;
  Plans?: PlanNode[];
}
const nodes = (n: PlanNode): PlanNode[] => [n, ...(n.Plans ?? []).flatMap(nodes)];

/** The nodes of the plan EXPLAIN (FORMAT JSON) returned. */
const planNodes = (rows: readonly Record<string, unknown>[]): PlanNode[] => {
  const plan = (onlyRow(rows, 'EXPLAIN')['QUERY PLAN'] as { Plan: PlanNode }[] | undefined)?.[0]?.Plan;
  if (!plan) throw new Error('EXPLAIN returned no plan');
  return nodes(plan);
};

const planOf = async (status: string, afterId = 0) => {
  // The statement src/store/pets/store.ts sends for GET /v1/pets?status=…&limit=100 (a cursor's id, or 0 for the first page)
  return planNodes(
    await t.sql.unsafe(
      `EXPLAIN (FORMAT JSON) SELECT id, name, category_id AS "categoryId", status FROM pets WHERE status = $1 AND id > $2 ORDER BY id LIMIT $3`,
      [status, afterId, 101],
    ),
  );
};
const unfilteredPlan = async (afterId: number) =>
  planNodes(
    await t.sql.unsafe(
      `EXPLAIN (FORMAT JSON) SELECT id, name, category_id AS "categoryId", status FROM pets WHERE id > $1 ORDER BY id LIMIT $2`,
      [afterId, 21],
    ),
  );

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
  const plan = await unfilteredPlan(0);
  expect(plan.map((n) => n['Node Type'])).not.toContain('Sort');
  expect(plan.some((n) => n['Node Type'] === 'Index Scan' && n['Index Name'] === 'pets_pkey')).toBe(true);
});

test('when a page deep in the list is asked for by cursor, then its index is entered at the cursor (its id is an index condition), filtered or not', async () => {
  // Rows before the cursor are never read: the scan (a plain index scan, or for a rare status a bitmap of the
  // few rows after the cursor) starts at the cursor's id.
  const startsAtCursor = (plan: PlanNode[], index: string) =>
    plan.some((n) => /Index Scan$/.test(n['Node Type']) && n['Index Name'] === index && /\bid > /.test(n['Index Cond'] ?? ''));
  expect(startsAtCursor(await unfilteredPlan(27_000), 'pets_pkey')).toBe(true);
  expect(startsAtCursor(await planOf('sold', 27_000), 'pets_status_id_idx')).toBe(true);
  const common = await planOf('available', 27_000);
  expect(common.map((n) => n['Node Type'])).not.toContain('Sort');
  expect(startsAtCursor(common, 'pets_status_id_idx') || startsAtCursor(common, 'pets_pkey')).toBe(true);
});

// listPets by category (alone, and with a status): migration 0006's indexes serve the filter, and
// the cursor enters the scan (`id > $2` is an index condition), so a deep page reads no more than
// the first. Where the planner expects few rows it may read them by bitmap and sort them (a
// category with a status: it does not know the two go together); the cursor still bounds the read.
const categoryPlan = async (categoryId: number, status: string | undefined, afterId: number) =>
  planNodes(
    await t.sql.unsafe(
      status === undefined
        ? `EXPLAIN (FORMAT JSON) SELECT id, name, category_id AS "categoryId", status FROM pets WHERE category_id = $1 AND id > $2 ORDER BY id LIMIT $3`
        : `EXPLAIN (FORMAT JSON) SELECT id, name, category_id AS "categoryId", status FROM pets WHERE category_id = $1 AND status = $4 AND id > $2 ORDER BY id LIMIT $3`,
      status === undefined ? [categoryId, afterId, 101] : [categoryId, afterId, 101, status],
    ),
  );
const scans = (plan: PlanNode[]) => plan.filter((n) => n['Node Type'] === 'Index Scan' || n['Node Type'] === 'Bitmap Index Scan');

const CATEGORY_INDEXES = ['pets_category_id_id_idx', 'pets_category_id_status_id_idx'];

test.each([
  ['a rare category', 999, undefined, CATEGORY_INDEXES],
  ['a rare category and its status', 999, 'available', CATEGORY_INDEXES],
  ['a category and a rare status', 0, 'sold', ['pets_category_id_status_id_idx']],
  // One animal in 40 (a category of 20, each with as many available as not): the composite index reads only them, where the
  // primary key from a deep cursor would read 40 rows for each it returns; the service's sessions plan so that it is chosen.
  ['a category and a common status', 3, 'available', ['pets_category_id_status_id_idx']],
  // One animal in 20, spread evenly: walking the primary key finds a page soonest, and the planner may choose it.
  ['a common category', 7, undefined, [...CATEGORY_INDEXES, 'pets_pkey']],
])(
  'when %s is listed, then every page is read from an index that serves it, entered at the cursor',
  async (_what, categoryId, status, indexes) => {
    const [first] = scans(await categoryPlan(categoryId, status, 0));
    expect(indexes).toContain(first?.['Index Name']);
    for (const afterId of [0, 25_000]) {
      const [scan] = scans(await categoryPlan(categoryId, status, afterId));
      expect(indexes).toContain(scan?.['Index Name']);
      expect(scan?.['Index Cond']).toMatch(/\bid > /);
    }
  },
);
