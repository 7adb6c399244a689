import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { RssReading } from '../../scripts/soak/instances';
import { type Sample, fittedGrowth, keptFlat, keptGrowth, loggedLines } from '../../scripts/soak/report';

// What the soak's report computes from what it recorded (scripts/soak/report.ts): the memory check on what each
// process kept after a full collection, the trend it prints of RSS as read, and the log lines it quotes for a wrong
// answer.

const MINUTE = 60_000;
/** Readings every 10 s for `minutes`, of `mib(t)` at t minutes. */
const series = (minutes: number, mib: (t: number) => number): RssReading[] =>
  Array.from({ length: minutes * 6 + 1 }, (_, i) => ({ at: 1_000_000 + (i * MINUTE) / 6, mib: mib(i / 6) }));

describe("the report's trend of RSS as read: growth along a least-squares line through a process RSS", () => {
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

/** A sample of `kept` RSS (MiB) by pid; undefined: the process did not answer. */
const sample = (label: string, kept: Record<number, number | undefined>): Sample => ({
  label,
  at: new Date().toISOString(),
  processes: Object.entries(kept).map(([pid, mib]) => ({
    instance: 'instance 2',
    pid: Number(pid),
    rssMiB: 150,
    kept: mib === undefined ? undefined : { rssMiB: mib, heapUsedMiB: 30, externalMiB: 4 },
  })),
  eventLoopP99Ms: [20],
});

describe('the memory check: the RSS each process kept after a full collection, from the middle to the end', () => {
  test('when every process kept under 10% more at the end, then it holds, with each growth as a fraction', () => {
    const growth = keptGrowth(sample('middle', { 1: 70, 2: 88 }), sample('end', { 1: 70, 2: 96 }));
    expect(growth.map((g) => g.pid)).toEqual([1, 2]);
    expect(growth[0]?.growth).toBe(0);
    expect(growth[1]?.growth).toBeCloseTo(8 / 88, 10);
    expect(keptFlat(growth)).toBe(true);
  });

  test('when one process kept 10% more or over, then it fails, whatever the others did', () => {
    expect(keptFlat(keptGrowth(sample('middle', { 1: 70, 2: 80 }), sample('end', { 1: 60, 2: 88 })))).toBe(false);
    expect(keptFlat(keptGrowth(sample('middle', { 1: 70, 2: 80 }), sample('end', { 1: 60, 2: 87.9 })))).toBe(true);
  });

  test('when a process that lived through the half gave no reading at the middle or at the end, then it fails: it cannot tell', () => {
    expect(keptFlat(keptGrowth(sample('middle', { 1: 70, 2: undefined }), sample('end', { 1: 70, 2: 88 })))).toBe(false);
    expect(keptFlat(keptGrowth(sample('middle', { 1: 70, 2: 88 }), sample('end', { 1: 70, 2: undefined })))).toBe(false);
  });

  test('when no process lived through the half (each restarted), then it fails, and a process of one sample only is not judged', () => {
    expect(keptGrowth(sample('middle', { 1: 70 }), sample('end', { 3: 200 }))).toEqual([]);
    expect(keptFlat([])).toBe(false);
    expect(keptFlat(keptGrowth(sample('middle', { 1: 70, 2: 88 }), sample('end', { 1: 70, 3: 200 })))).toBe(true);
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
