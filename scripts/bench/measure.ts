/**
 * One measured run of the bench: the scenarios, and what a run of one of them against one
 * server yields (req/s, latency, errors, unexpected statuses, resident memory and the
 * server's CPU time per request).
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync, readdirSync } from 'node:fs';
import { isDeepStrictEqual } from 'node:util';
import autocannon from 'autocannon';
import { connect } from '../../src/store/database/db';
import { migrate } from '../../src/store/database/migrate';
import { seedSampleAnimals } from '../db/sampleAnimals';
import { type ServerProcess, UNREACHABLE_RATE_LIMIT, childrenOf, scratchDatabase } from '../lib/processes';

/** What the bench's runs load: the first page, by status, a random animal, creating one, refusals. */
export interface Scenario {
  name: string;
  database: boolean;
  expected: number;
  /** autocannon's options for it; `path` is joined to the server's origin. */
  request: (
    key: string,
    pets: number,
  ) => Pick<autocannon.Options, 'method' | 'headers' | 'body' | 'requests' | 'overallRate'> & {
    path?: string;
  };
}

export const auth = (key: string) => ({ authorization: `Bearer ${key}` });
export const SCENARIOS: Scenario[] = [
  {
    name: 'GET /v1/pets?limit=20',
    database: true,
    expected: 200,
    request: (key) => ({ method: 'GET', path: '/v1/pets?limit=20', headers: auth(key) }),
  },
  {
    name: 'GET /v1/pets?status=available&limit=100',
    database: true,
    expected: 200,
    request: (key) => ({ method: 'GET', path: '/v1/pets?status=available&limit=100', headers: auth(key) }),
  },
  {
    name: 'GET /v1/pets/{random id}',
    database: true,
    expected: 200,
    request: (key, pets) => ({
      headers: auth(key),
      requests: [{ method: 'GET', setupRequest: (r) => ({ ...r, path: `/v1/pets/${1 + Math.floor(Math.random() * pets)}` }) }],
    }),
  },
  {
    name: 'POST /v1/pets (valid)',
    database: true,
    expected: 201,
    request: (key) => ({
      method: 'POST',
      path: '/v1/pets',
      headers: { ...auth(key), 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Benchmarked', categoryId: 7, status: 'pending' }),
    }),
  },
  {
    name: 'POST /v1/pets (invalid: 400)',
    database: false,
    expected: 400,
    request: (key) => ({
      method: 'POST',
      path: '/v1/pets',
      headers: { ...auth(key), 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'No category' }),
    }),
  },
  { name: 'GET /v1/pets without a key (401)', database: false, expected: 401, request: () => ({ method: 'GET', path: '/v1/pets' }) },
];

export interface Measurement {
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  unexpected: number;
  rssMb: number;
  /** The server's CPU time (user + system, its workers included) per request answered, in µs. */
  cpuUs: number;
  /** The requests answered. */
  answered: number;
}

/** Two runs of one scenario on one server as one: the CPU over every request answered, the means of req/s and latency, the worst memory. */
export function joinRuns(a: Measurement, b: Measurement): Measurement {
  const answered = a.answered + b.answered;
  return {
    rps: (a.rps + b.rps) / 2,
    p50: (a.p50 + b.p50) / 2,
    p99: (a.p99 + b.p99) / 2,
    errors: a.errors + b.errors,
    unexpected: a.unexpected + b.unexpected,
    rssMb: Math.max(a.rssMb, b.rssMb),
    cpuUs: (a.cpuUs * a.answered + b.cpuUs * b.answered) / Math.max(1, answered),
    answered,
  };
}

/** Clock ticks per second, the unit of /proc/PID/stat's times. */
const CLOCK_TICKS = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;

/**
 * The CPU time (user + system, µs) in the text of a /proc stat file (/proc/PID/stat,
 * /proc/PID/task/TID/stat): fields 14 and 15, counted after the command name's last ')'.
 */
function cpuOfStat(stat: string): number {
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1_000_000) / CLOCK_TICKS;
}

/** A /proc file's text; undefined once its process or thread has ended. */
function readProc(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
}

/** The CPU time (user + system, µs) a process and its children (cluster workers) have used so far. */
export function cpuMicros(pid: number): number {
  return [pid, ...childrenOf(pid)].reduce((n, p) => {
    const stat = readProc(`/proc/${p}/stat`);
    return stat === undefined ? n : n + cpuOfStat(stat);
  }, 0);
}

/**
 * The CPU time (user + system, µs) each kind of thread of a process has used since `before` (another
 * call's result; none: since it started), summed by the thread's name (Node 24's): `MainThread` runs
 * JavaScript, V8's platform workers (`V8Worker`) collect garbage and compile beside it, libuv's pool
 * (`libuv-worker`) does the file system and DNS.
 */
export function threadCpuMicros(pid: number, before?: ReadonlyMap<string, number>): Map<string, number> {
  const byName = new Map<string, number>();
  let tasks: string[] = [];
  try {
    tasks = readdirSync(`/proc/${pid}/task`);
  } catch {
    return byName;
  }
  for (const tid of tasks) {
    const stat = readProc(`/proc/${pid}/task/${tid}/stat`);
    if (stat === undefined) continue; // The thread ended between the listing and the read.
    const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
    byName.set(name, (byName.get(name) ?? 0) + cpuOfStat(stat));
  }
  if (before) for (const [name, us] of byName) byName.set(name, us - (before.get(name) ?? 0));
  return byName;
}

/** How many answers of each status a run of autocannon counted. */
export const statusCounts = (result: autocannon.Result) => result.statusCodeStats as unknown as Record<string, { count: number }>;

/** Resident memory of a process and its children (cluster workers), in MB: the largest one. */
function rssOf(pid: number): number {
  const rss = (p: number) => Number(/VmRSS:\s+(\d+)/.exec(readProc(`/proc/${p}/status`) ?? '')?.[1] ?? 0) / 1024;
  return Math.max(rss(pid), ...childrenOf(pid).map(rss));
}

/** The load a run puts on a server: autocannon's connections for `duration` seconds, over `pets` animals. */
export interface Load {
  connections: number;
  duration: number;
  pets: number;
}

/** One run of `scenario` against `server`. */
export async function measure(server: ServerProcess, scenario: Scenario, key: string, o: Load): Promise<Measurement> {
  const pid = server.child.pid as number;
  let rssMb = 0;
  const cpuBefore = cpuMicros(pid);
  const threadsBefore = process.env.BENCH_DEBUG ? threadCpuMicros(pid) : undefined;
  const sampler = setInterval(() => (rssMb = Math.max(rssMb, rssOf(pid))), 250);
  const { path: requestPath = '', ...options } = scenario.request(key, o.pets);
  const result = await autocannon({
    url: `${new URL(server.baseUrl).origin}${requestPath}`,
    connections: o.connections,
    duration: o.duration,
    ...options,
  });
  const cpu = cpuMicros(pid) - cpuBefore;
  clearInterval(sampler);
  rssMb = Math.max(rssMb, rssOf(pid));
  const byStatus = statusCounts(result);
  const answered = Object.values(byStatus).reduce((n, s) => n + s.count, 0);
  const unexpected = Object.entries(byStatus).reduce((n, [code, s]) => (Number(code) === scenario.expected ? n : n + s.count), 0);
  if (threadsBefore) {
    const threads = [...threadCpuMicros(pid, threadsBefore)].map(([name, us]) => `${name} ${(us / Math.max(1, answered)).toFixed(0)}`);
    process.stderr.write(
      `${new Date().toISOString()} ${scenario.name} pid ${pid} ${o.duration} s ${JSON.stringify(byStatus)} µs/request by thread: ${threads.join(', ')}\n`,
    );
  }
  return {
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors + result.timeouts,
    unexpected,
    rssMb,
    cpuUs: cpu / Math.max(1, answered),
    answered,
  };
}

/**
 * Loads `scenario` on a freshly started `server` in runs of `o.warmup` seconds until two runs in a
 * row cost the same server CPU per request within 10% (at most 8 runs): by then the process has
 * compiled what the scenario runs, and what follows measures the scenario, not the compiler.
 */
export async function warmUp(server: ServerProcess, scenario: Scenario, key: string, o: Load & { warmup: number }): Promise<void> {
  let before: number | undefined;
  for (let run = 0; run < 8; run++) {
    const { cpuUs } = await measure(server, scenario, key, { ...o, duration: o.warmup });
    if (before !== undefined && Math.abs(cpuUs / before - 1) <= 0.1) return;
    before = cpuUs;
  }
}

/**
 * A measured run of `scenario` right after the server's CPU per request holds again: unmeasured runs of `o.warmup`
 * seconds until two in a row cost the same within 10% (`warmUp`; none when `o.warmup` is 0). A process idle for
 * minutes since its warm-up is dearer for its first seconds, most of the excess in V8's worker threads, which collect
 * garbage and compile (BENCH_DEBUG=1 prints each thread's share of every run): on the first page after the round's
 * warm-ups (2026-12-07, one round) the product spent 231 µs a request in a lead-in of 1 s and 198 in the 2 s measured
 * after it, and 102 in its second half a minute later; fastify 162, 111 and 95. One fixed second was not enough.
 */
export async function measureWarm(
  server: ServerProcess,
  scenario: Scenario,
  key: string,
  o: Load & { warmup: number },
): Promise<Measurement> {
  if (o.warmup > 0) await warmUp(server, scenario, key, o);
  return measure(server, scenario, key, o);
}

/** The reads every baseline and alternative must answer as the product does before any is measured. */
const SAME_ANSWERS = ['/v1/pets?limit=20', '/v1/pets?status=available&limit=100', '/v1/pets/1', '/v1/pets?limit=0'];

/**
 * Refuses a run whose contestants answer otherwise than the product: the same status, `Link` and
 * JSON body (members in any order; of a refusal, its code and status) for each of `SAME_ANSWERS`. `bench.test.ts` holds their code to
 * this on the product's pool; this holds them to it on their own (postgres.js as published), every run.
 */
export async function sameAnswersAsTheProduct(product: ServerProcess, others: Record<string, ServerProcess>, key: string) {
  const answer = async (server: ServerProcess, path: string) => {
    const reply = await fetch(new URL(path, new URL(server.baseUrl).origin), { headers: auth(key) });
    const body = (await reply.json()) as { code?: unknown; status?: unknown };
    // A refusal's code and status: its message and fields are each contestant's own wording of it.
    const kept = reply.status >= 400 ? { code: body.code, status: body.status } : body;
    return { status: reply.status, link: reply.headers.get('link'), body: kept };
  };
  for (const path of SAME_ANSWERS) {
    const expected = await answer(product, path);
    for (const [name, server] of Object.entries(others)) {
      const got = await answer(server, path);
      if (!isDeepStrictEqual(got, expected))
        throw new Error(`${name} answers GET ${path} otherwise than the product: ${JSON.stringify(got).slice(0, 400)}`);
    }
  }
}

/** The median (NaN for none). */
export const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const at = (i: number) => s[i] ?? Number.NaN;
  return s.length % 2 ? at((s.length - 1) / 2) : (at(s.length / 2 - 1) + at(s.length / 2)) / 2;
};
export const geomean = (xs: number[]) => Math.exp(xs.reduce((a, x) => a + Math.log(x), 0) / xs.length);
export const f2 = (x: number) => x.toFixed(2);

/** A section of the deep page's run that sets two scenarios side by side (conditional.ts, mcp.ts). */
export type PairSection = (
  server: ServerProcess,
  key: string,
  o: Load & { rounds: number; smoke: boolean },
  out: (line: string) => void,
) => Promise<{ clean: boolean }>;

/**
 * Two scenarios measured side by side on one server, in interleaved rounds (the order flips each
 * round) after a warm-up round (none with --smoke); prints their table (req/s, p50, p99, server CPU
 * per request) and returns the CPU ratio, second / first, and whether every run was clean.
 */
export async function sideBySide(
  server: ServerProcess,
  pair: readonly [Scenario, Scenario],
  key: string,
  o: Load & { rounds: number; smoke: boolean },
  out: (line: string) => void,
  column: string,
): Promise<{ cpuRatio: number; clean: boolean }> {
  const runs = pair.map(() => [] as Measurement[]);
  for (let round = o.smoke ? 1 : 0; round <= o.rounds; round++)
    for (const i of round % 2 ? [1, 0] : [0, 1]) {
      const m = await measure(server, pair[i] as Scenario, key, o);
      if (round > 0) runs[i]?.push(m);
    }
  out(`| ${column} | req/s (median) | p50 ms | p99 ms | server CPU µs/request | errors | unexpected |`);
  out('|---|---|---|---|---|---|---|');
  const cpu = (i: number) => median((runs[i] ?? []).map((m) => m.cpuUs));
  pair.forEach((scenario, i) => {
    const ms = runs[i] ?? [];
    out(
      `| ${scenario.name} | ${Math.round(median(ms.map((m) => m.rps)))} | ${median(ms.map((m) => m.p50))} | ${median(ms.map((m) => m.p99))} | ${Math.round(cpu(i))} | ${ms.reduce((a, m) => a + m.errors, 0)} | ${ms.reduce((a, m) => a + m.unexpected, 0)} |`,
    );
  });
  return { cpuRatio: cpu(1) / cpu(0), clean: runs.flat().every((m) => m.errors === 0 && m.unexpected === 0) };
}

/**
 * A database of its own for one of the bench's tools (bench:profile, bench:drift) on the server `adminUrl`
 * names: migrated, seeded with `pets` animals and analysed; with one API key and the settings a server runs
 * with there as the bench runs the product (the log line at info, the rate limiter on with a limit never
 * reached, no reply check, any free port). `db.drop()` removes it.
 */
export async function seededBenchDatabase(adminUrl: string, prefix: string, pets: number) {
  const db = await scratchDatabase(adminUrl, prefix);
  try {
    const sql = connect(db.url, { max: 1 });
    try {
      await migrate(sql);
      await seedSampleAnimals(sql, pets);
      await sql`ANALYZE pets`;
    } finally {
      await sql.end();
    }
  } catch (err) {
    await db.drop();
    throw err;
  }
  const key = randomBytes(24).toString('base64url');
  const env = {
    DATABASE_URL: db.url,
    API_KEYS: key,
    RATE_LIMIT: UNREACHABLE_RATE_LIMIT,
    LOG_LEVEL: 'info',
    VALIDATE_RESPONSES: 'off',
    PORT: '0',
  };
  return { db, key, env };
}
