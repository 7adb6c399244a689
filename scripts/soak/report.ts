import type { Sql } from '../../src/store/db';
import type { KeyChurn } from './keys';
import type { Traffic } from './traffic';

export interface Sample {
  label: string;
  at: string;
  processes: { instance: string; pid: number; rssMiB: number }[];
  /** Per instance, the highest p99 of its workers' event-loop delay that its scrapes met (ms). */
  eventLoopP99Ms: (number | undefined)[];
}

/** RSS may grow this much over a run's second half, from the middle sample to the end's. */
const FLAT = 0.1;
/** Runs this long or longer assert it: a shorter one's second half is still warming up. */
const FLAT_FROM_MINUTES = 20;

interface Run {
  minutes: number;
  traffic: Traffic;
  churn: KeyChurn;
  faults: { what: string; recoveredMs: (number | undefined)[] }[];
  samples: Sample[];
  /** Each process's RSS (MiB) once a minute, by pid. */
  rssByMinute: Map<number, number[]>;
  /** The database, directly (not through the service): where acknowledged creates must be. */
  sql: Sql;
  say: (line: string) => void;
}

/** Prints the run's report and returns its exit status: 0 when every check holds. */
/**
 * The growth a least-squares line through `ys` (one a minute) gives from its first point to its last, as a fraction
 * of its first: the trend, where two single samples also carry the collector's ups and downs.
 */
function fittedGrowth(ys: number[]): number | undefined {
  const n = ys.length;
  if (n < 3) return undefined;
  const meanX = (n - 1) / 2;
  const meanY = ys.reduce((a, b) => a + b, 0) / n;
  const slope = ys.reduce((a, y, x) => a + (x - meanX) * (y - meanY), 0) / ys.reduce((a, _, x) => a + (x - meanX) ** 2, 0);
  const first = meanY - slope * meanX;
  return first > 0 ? (slope * (n - 1)) / first : undefined;
}

export async function report({ minutes, traffic, churn, faults, samples, rssByMinute, sql, say }: Run): Promise<number> {
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
    say(`  ${f.what}; serving again after ${f.recoveredMs.map((ms) => (ms === undefined ? 'NEVER' : `${ms} ms`)).join(', ')}`);
  say('processes (RSS MiB at start / middle / end, by pid; event-loop p99 ms per instance):');
  const pids = [...new Set(samples.flatMap((s) => s.processes.map((p) => `${p.instance} ${p.pid}`)))];
  for (const key of pids) {
    const rss = samples.map((s) => s.processes.find((p) => `${p.instance} ${p.pid}` === key)?.rssMiB ?? '-');
    say(`  ${key.padEnd(20)} ${rss.join(' / ')}`);
  }
  for (const s of samples) say(`  event loop p99 at ${s.label}: ${s.eventLoopP99Ms.map((ms) => ms ?? '?').join(', ')} ms`);

  const [, middle, end] = samples;
  const growth = (middle?.processes ?? []).flatMap((m) => {
    const e = end?.processes.find((p) => p.pid === m.pid);
    return e && m.rssMiB > 0 ? [{ pid: m.pid, growth: (e.rssMiB - m.rssMiB) / m.rssMiB }] : [];
  });
  for (const { pid, growth: g } of growth) {
    const ys = rssByMinute.get(pid) ?? [];
    const fitted = fittedGrowth(ys.slice(Math.floor(ys.length / 2)));
    say(`  ${pid} RSS once a minute: ${ys.join(' ')}`);
    say(
      `  ${pid} over the second half: ${Math.round(g * 1000) / 10}% from the middle sample to the end's; ${fitted === undefined ? '?' : `${Math.round(fitted * 1000) / 10}%`} along a least-squares line`,
    );
  }
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
    [
      `RSS growth over the second half, highest: ${growth.length ? `${Math.round(Math.max(...growth.map((g) => g.growth)) * 1000) / 10}%` : 'no process lived through it'}${minutes < FLAT_FROM_MINUTES ? ` (asserted from ${FLAT_FROM_MINUTES} min)` : ''}`,
      minutes < FLAT_FROM_MINUTES || growth.every((g) => g.growth < FLAT),
    ],
  ];
  for (const w of ledger.wrong.slice(0, 20)) say(`  wrong: ${w}`);
  for (const p of lost.slice(0, 20)) say(`  lost: ${JSON.stringify(p)} stored as ${JSON.stringify(stored.get(p.id))}`);
  say('checks:');
  for (const [line, ok] of checks) say(`  ${ok ? 'ok  ' : 'FAIL'} ${line}`);
  return checks.every(([, ok]) => ok) ? 0 : 1;
}
