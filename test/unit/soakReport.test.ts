import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { RssReading } from '../../scripts/soak/instances';
import { fittedGrowth, loggedLines } from '../../scripts/soak/report';

// What the soak's report computes from what it recorded (scripts/soak/report.ts): the memory check's trend,
// and the log lines it quotes for a wrong answer.

const MINUTE = 60_000;
/** Readings every 10 s for `minutes`, of `mib(t)` at t minutes. */
const series = (minutes: number, mib: (t: number) => number): RssReading[] =>
  Array.from({ length: minutes * 6 + 1 }, (_, i) => ({ at: 1_000_000 + (i * MINUTE) / 6, mib: mib(i / 6) }));

describe('the memory check: growth along a least-squares line through a process RSS', () => {
  test('when the RSS is flat, then the growth is 0', () => {
    expect(fittedGrowth(series(30, () => 150))).toBeCloseTo(0, 10);
  });

  test('when the RSS grows 1% of its start a minute for 30 minutes, then the growth is 30%', () => {
    expect(fittedGrowth(series(30, (t) => 100 * (1 + 0.01 * t)))).toBeCloseTo(0.3, 6);
  });

  test('when the RSS swings by a quarter around a flat level, then the growth stays near 0, where the two end readings say far more', () => {
    // A heap grown and collected: 120 MiB and 180 MiB in turn, from a low reading to a high one.
    const swinging = series(30, (t) => (Math.round(t * 6) % 2 === 0 ? 180 : 120)).slice(1);
    const [first, last] = [swinging[0]!, swinging[swinging.length - 1]!];
    expect(last.mib / first.mib - 1).toBeCloseTo(0.5, 6);
    expect(Math.abs(fittedGrowth(swinging)!)).toBeLessThan(0.01);
  });

  test('when the RSS shrinks, then the growth is negative', () => {
    expect(fittedGrowth(series(30, (t) => 200 - t))).toBeCloseTo(-30 / 200, 2);
  });

  test('when there are fewer than 3 readings, then there is no growth to tell', () => {
    expect(fittedGrowth([])).toBeUndefined();
    expect(fittedGrowth(series(30, () => 150).slice(0, 2))).toBeUndefined();
  });
});

describe("a wrong answer's log lines, quoted from the instances' logs", () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'animal-store-soak-report-'));
    const line = (id: string, msg: string) => JSON.stringify({ level: 50, req: { id, method: 'POST', path: '/v1/pets' }, msg });
    writeFileSync(path.join(dir, 'instance-1.log'), [line('a-1', 'request completed'), line('b-2', 'request failed'), ''].join('\n'));
    writeFileSync(path.join(dir, 'instance-2.log'), [line('c-3', 'request failed'), 'x'.repeat(5_000), ''].join('\n'));
    writeFileSync(path.join(dir, 'notes.txt'), line('c-3', 'not a log file'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  test("when request ids are given, then each one's line is quoted from every instance log, and no other", async () => {
    const lines = await loggedLines(dir, ['b-2', 'c-3']);
    expect(lines.map((l) => (JSON.parse(l) as { req: { id: string } }).req.id).sort()).toEqual(['b-2', 'c-3']);
    expect(lines.join('\n')).not.toMatch(/not a log file/);
  });

  test('when an id is the start of another, then only its own line is quoted', async () => {
    expect(await loggedLines(dir, ['b-'])).toEqual([]);
  });

  test('when more lines match than asked for, then at most that many are quoted, and none when no id is given', async () => {
    expect(await loggedLines(dir, ['a-1', 'b-2', 'c-3'], 2)).toHaveLength(2);
    expect(await loggedLines(dir, [])).toEqual([]);
  });
});
