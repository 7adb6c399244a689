import { randomId } from '../../../src/store/randomIds';

// Event ids: base62 from the random source drawn 4 KiB at a time, each byte handed out once.
test('when many ids are drawn, across many refills of the pool, then each has its length and base62 only, and none repeats', () => {
  const ids = Array.from({ length: 20_000 }, () => randomId(24));
  expect(ids.every((id) => /^[0-9A-Za-z]{24}$/.test(id))).toBe(true);
  expect(new Set(ids).size).toBe(ids.length);
});

test('when characters are drawn, then each of the 62 comes about equally often', () => {
  const counts = new Map<string, number>();
  for (const c of randomId(124_000)) counts.set(c, (counts.get(c) ?? 0) + 1);
  expect(counts.size).toBe(62);
  // 2,000 each expected; the standard deviation is about 44, so 15% either way is nearly 7 of them.
  for (const n of counts.values()) expect(Math.abs(n - 2_000)).toBeLessThan(300);
});
