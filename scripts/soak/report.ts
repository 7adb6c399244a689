import { createReadStream, readdirSync } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';
import type { Sql } from '../../src/store/database/db';
import { STORM_MS } from './faults';
import type { HeapReading, KeptReading, RssReading } from './instances';
import type { KeyChurn } from './keys';
import type { Traffic } from './traffic';

export interface Sample {
  label: string;
  at: string;
  /** Each process's RSS as read, and what it kept after a full collection (undefined: it did not answer in time). */
  processes: { instance: string; pid: number; rssMiB: number; kept: KeptReading | undefined }[];
  /** Per instance, the highest p99 of its workers' event-loop delay that its scrapes met (ms). */
  eventLoopP99Ms: (number | undefined)[];
}

/** RSS kept after a full collection may grow this much over a run's second half, from the middle sample to the end's. */
const FLAT = 0.1;
/** Runs this long or longer assert it: a shorter one's second half is still warming up. */
const FLAT_FROM_MINUTES = 20;

/** A fault as the run injected it, and how long each instance took to serve again (undefined: never). */
export interface Fault {
  /** When it began: HH:MM:SS, UTC. */
  at: string;
  what: string;
  /** A storm's connections the server had not closed at its end (STORM_MS). */
  silentHeld?: number;
  recoveredMs: (number | undefined)[];
}

interface Run {
  minutes: number;
  traffic: Traffic;
  churn: KeyChurn;
  faults: Fault[];
  samples: Sample[];
  /** Each process's RSS, read every 10 s, by pid. */
  rssSeries: Map<number, RssReading[]>;
  /** Each process's heap, read from its diagnostic report once a minute, by pid. */
  heapSeries: Map<number, HeapReading[]>;
  /** The database, directly (not through the service): where acknowledged creates must be. */
  sql: Sql;
  say: (line: string) => void;
}

/**
 * The growth a least-squares line through `readings` gives from the first one's time to the last one's, as a
 * fraction of the line's value at the first: the trend. A worker's RSS swings by a quarter from one minute to the
 * next as its heap grows and is collected (118–205 MiB in a 20-minute run), so two single readings say little.
 */
export function fittedGrowth(readings: RssReading[]): number | undefined {
  const n = readings.length;
  const [start, last] = [readings[0], readings[n - 1]];
  if (n < 3 || !start || !last) return undefined;
  const xs = readings.map((r) => r.at - start.at);
  const meanX = xs.reduce((a, b) => a + b, 0) / n;
  const meanY = readings.reduce((a, r) => a + r.mib, 0) / n;
  const slope =
    readings.reduce((a, r, i) => a + ((xs[i] as number) - meanX) * (r.mib - meanY), 0) / xs.reduce((a, x) => a + (x - meanX) ** 2, 0);
  const first = meanY - slope * meanX;
  return first > 0 ? (slope * (last.at - start.at)) / first : undefined;
}

/**
 * The memory check's figure for each process that lived through the second half (in both the middle and the end
 * samples): the growth of the RSS it kept after a full collection, from the middle to the end. Undefined when either
 * reading is missing: the check cannot tell, and counts it as failed.
 */
export function keptGrowth(middle: Sample | undefined, end: Sample | undefined): { pid: number; growth: number | undefined }[] {
  return (middle?.processes ?? []).flatMap((m) => {
    const e = end?.processes.find((p) => p.pid === m.pid);
    if (!e) return [];
    return [{ pid: m.pid, growth: m.kept && e.kept ? (e.kept.rssMiB - m.kept.rssMiB) / m.kept.rssMiB : undefined }];
  });
}

/** The memory check: at least one process lived through the second half, and each one's kept RSS grew under FLAT. */
export const keptFlat = (growth: { growth: number | undefined }[]) =>
  growth.length > 0 && growth.every((g) => g.growth !== undefined && g.growth < FLAT);

/** Prints the run's report and returns its exit status: 0 when every check holds. */
export async function report({ minutes, traffic, churn, faults, samples, rssSeries, heapSeries, sql, say }: Run): Promise<number> {
  const { ledger } = traffic;
  const acknowledged = [...ledger.acknowledged.values()];
  const stored = new Map(
    (
      await sql<{ id: number; name: string; categoryId: number; status: string }[]>`
        SELECT id, name, category_id AS "categoryId", status FROM pets
        WHERE id IN (SELECT jsonb_array_elements_text(${JSON.stringify(acknowledged.map((p) => p.id))}::text::jsonb)::bigint)`
    ).map((row) => [Number(row.id), row]),
  );
  const lost = acknowledged.filter((p) => {
    const row = stored.get(p.id);
    return !row || row.name !== p.name || row.categoryId !== p.categoryId || row.status !== p.status;
  });
  const committedRefusals = await sql<{ name: string }[]>`
    SELECT name FROM pets WHERE name IN (SELECT jsonb_array_elements_text(${JSON.stringify(ledger.refusedNames)}::text::jsonb))`;

  say(`report: ${minutes} min, ${ledger.requests} requests, ${faults.length} faults`);
  for (const [label, n] of [...ledger.statuses].sort()) say(`  ${label.padEnd(44)} ${n}`);
  const failedTurns = [...churn.failed.values()].reduce((a, b) => a + b, 0);
  say(`  managed keys: ${churn.made} made, ${churn.rotated} rotated, ${churn.revoked} revoked, ${failedTurns} turns given up`);
  for (const [reason, n] of churn.failed) say(`    given up ${n}×: ${reason}`);
  const served = churn.lastServedAfterMs.filter(Number.isFinite);
  say(
    `  a revoked key's last answer other than 401/503: ${served.length ? `${Math.max(...served)} ms after the commit at most` : 'none after the commit'}`,
  );
  say('faults:');
  for (const f of faults)
    say(`  ${f.at} ${f.what}; serving again after ${f.recoveredMs.map((ms) => (ms === undefined ? 'NEVER' : `${ms} ms`)).join(', ')}`);
  say(
    'processes (RSS MiB at start / middle / end, as read and (anonymous) kept after a full collection, by pid; event-loop p99 ms per instance):',
  );
  const pids = [...new Set(samples.flatMap((s) => s.processes.map((p) => `${p.instance} ${p.pid}`)))];
  for (const key of pids) {
    const rss = samples
      .map((s) => s.processes.find((p) => `${p.instance} ${p.pid}` === key))
      .map((p) => (p ? `${p.rssMiB} (${p.kept?.rssMiB ?? '?'})` : '-'));
    say(`  ${key.padEnd(20)} ${rss.join(' / ')}`);
  }
  for (const s of samples) say(`  event loop p99 at ${s.label}: ${s.eventLoopP99Ms.map((ms) => ms ?? '?').join(', ')} ms`);

  const [, middle, end] = samples;
  const pct = (g: number | undefined) => (g === undefined ? '?' : `${Math.round(g * 1000) / 10}%`);
  // Each process that lived through the second half: the check's figure (keptGrowth), beside its RSS as read once a
  // minute, and that RSS's and the heap in use's growth along a least-squares line through the half's readings
  // (garbage not collected yet included).
  const growth = keptGrowth(middle, end);
  const since = Date.parse(middle?.at ?? '');
  for (const { pid, growth: kept } of growth) {
    const readings = rssSeries.get(pid) ?? [];
    say(
      `  ${pid} RSS once a minute: ${readings
        .filter((_, i) => i % 6 === 5)
        .map((r) => r.mib)
        .join(' ')}`,
    );
    const heap = heapSeries.get(pid) ?? [];
    say(
      `  ${pid} heap used / heap size / external MiB / libuv handles once a minute: ${heap.map((h) => `${h.usedMiB}/${h.totalMiB}/${h.externalMiB}/${h.handles}`).join(' ')}`,
    );
    const heapFitted = fittedGrowth(heap.filter((h) => h.at >= since).map((h) => ({ at: h.at, mib: h.usedMiB })));
    const [m, e] = [middle, end].map((s) => s?.processes.find((p) => p.pid === pid)?.kept);
    const keptHeap =
      m && e ? `, its heap in use ${m.heapUsedMiB} → ${e.heapUsedMiB} MiB, external ${m.externalMiB} → ${e.externalMiB} MiB` : '';
    say(
      `  ${pid} over the second half: kept after a full collection ${pct(kept)}${keptHeap}; as read, ${pct(fittedGrowth(readings.filter((r) => r.at >= since)))} along a line, heap used ${pct(heapFitted)}`,
    );
  }
  const highest = Math.max(...growth.map((g) => g.growth ?? Number.POSITIVE_INFINITY));
  const held = faults.reduce((n, f) => n + (f.silentHeld ?? 0), 0);
  const checks: [string, boolean][] = [
    [`acknowledged creates lost: ${lost.length} of ${acknowledged.length}`, lost.length === 0],
    [
      `creates answered 503 and stored anyway: ${committedRefusals.length} of ${ledger.refusedNames.length}`,
      committedRefusals.length === 0,
    ],
    [`wrong answers (5xx other than 503 included): ${ledger.wrong.length}`, ledger.wrong.length === 0],
    [`revoked keys probed: ${churn.revoked} (at least one per minute of the run)`, churn.revoked >= minutes],
    [
      `faults after which an instance never served again: ${faults.filter((f) => f.recoveredMs.includes(undefined)).length}`,
      faults.every((f) => !f.recoveredMs.includes(undefined)),
    ],
    [`silent connections a storm left open past ${STORM_MS / 1000} s (HEADERS_TIMEOUT_MS, 10 s): ${held}`, held === 0],
    [
      `RSS kept after a full collection, growth over the second half, highest: ${growth.length ? pct(highest) : 'no process lived through it'}${minutes < FLAT_FROM_MINUTES ? ` (asserted from ${FLAT_FROM_MINUTES} min)` : ''}`,
      minutes < FLAT_FROM_MINUTES || keptFlat(growth),
    ],
  ];
  for (const w of ledger.wrong.slice(0, 20)) say(`  wrong: ${w.text}${w.requestId === undefined ? '' : ` [X-Request-Id ${w.requestId}]`}`);
  for (const p of lost.slice(0, 20)) say(`  lost: ${JSON.stringify(p)} stored as ${JSON.stringify(stored.get(p.id))}`);
  say('checks:');
  for (const [line, ok] of checks) say(`  ${ok ? 'ok  ' : 'FAIL'} ${line}`);
  return checks.every(([, ok]) => ok) ? 0 : 1;
}

/**
 * The instances' log lines (the `*.log` files in `dir`) of the requests `ids` name, at most `max` of them, each cut to
 * 4,000 characters: a wrong answer's line holds its cause with its stack, so that a run that failed says why where it
 * is read (CI's output), not only in logs that a clean clone's run does not keep.
 */
export async function loggedLines(dir: string, ids: readonly string[], max = 10): Promise<string[]> {
  const needles = ids.slice(0, max).map((id) => `"id":${JSON.stringify(id)}`);
  const found: string[] = [];
  if (needles.length === 0) return found;
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.log'))) {
    const lines = createInterface({ input: createReadStream(path.join(dir, file)), crlfDelay: Infinity });
    for await (const line of lines) {
      if (found.length < max && needles.some((n) => line.includes(n))) found.push(line.slice(0, 4_000));
    }
  }
  return found;
}
