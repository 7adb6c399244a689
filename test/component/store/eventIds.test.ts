import { testAppForFile } from '../../support/harness';

// An event's id is made by the database where its row is written (migration 9, webhook_event_id()).
const t = testAppForFile();
const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

test('when the database makes 2,000 event ids, then each is evt_ and 24 of [0-9A-Za-z], no two alike, every character about as likely', async () => {
  const rows = await t.sql<{ id: string }[]>`SELECT webhook_event_id() AS id FROM generate_series(1, 2000)`;
  const ids = rows.map((r) => r.id);
  expect(ids.filter((id) => !/^evt_[0-9A-Za-z]{24}$/.test(id))).toEqual([]);
  expect(new Set(ids).size).toBe(ids.length);
  const counts = new Map<string, number>();
  for (const id of ids) for (const c of id.slice(4)) counts.set(c, (counts.get(c) ?? 0) + 1);
  // 48,000 characters over 62: 774 each on average, a standard deviation of 27.6; six of them either side.
  expect([...counts.keys()].sort()).toEqual([...ALPHABET].sort());
  const outside = [...counts].filter(([, n]) => n < 774 - 6 * 28 || n > 774 + 6 * 28);
  expect(outside).toEqual([]);
});

test('when a row is written without an id, then the database gives it one', async () => {
  const [row] = await t.sql<{ id: string }[]>`INSERT INTO webhook_events (type, data) VALUES ('pet.created', '{}') RETURNING id`;
  expect(row?.id).toMatch(/^evt_[0-9A-Za-z]{24}$/);
});
