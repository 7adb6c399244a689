/**
 * npm run bench [-- --rounds N] [--duration S] [--connections N] [--pets N] [--deep-pets N] [--smoke] [--scale] [--deep]
 *
 * The product as production runs it, against two baselines kept in scripts/bench/ (the
 * node:http limit and the bare express floor), the two alternatives a user would pick instead
 * (express 5 + openapi-backend as documented, express 5 + express-openapi-validator), and
 * itself with VALIDATE_RESPONSES=log and =enforce (the cost of checking each reply) and with
 * RATE_LIMIT=off (the cost of the rate limiter), on a
 * database of its own on DATABASE_URL seeded with --pets animals (100,000; statuses evenly
 * spread), all loaded with autocannon over loopback, interleaved round by round after a
 * discarded warm-up round. Prints per scenario req/s, p50, p99, errors
 * and unexpected statuses for each, the ratios per round with their medians and geometric
 * means, start-up time and memory, and checks the targets; writes the same as Markdown to
 * scripts/bench/results/ and, for a full run, to docs/bench-results.md (committed). Then the deep
 * page: on a database of --deep-pets animals (1,000,000), a page 90% of the way through the
 * catalogue, reached by following Link rel="next" from the first page, beside the first page
 * (with and without a status filter): its p99 must be within 1.25× the first page's. --smoke:
 * one short round, a small table and a small deep-page check, no targets. --deep: the deep
 * page alone. --scale: the listPets-by-status p99 at 10,000 and at 1,000,000 animals.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import { connect } from '../../src/store/db';
import { projectRoot } from '../../src/paths';
import { migrate } from '../../src/store/migrate';
import {
  type ServerProcess,
  type StartOptions,
  UNREACHABLE_RATE_LIMIT,
  childrenOf,
  freePort,
  positiveIntegerOption,
  runToEnd,
  scratchDatabase,
  startProduct,
  startServerProcess,
} from '../lib/processes';
import { seedSampleAnimals } from '../db/sampleAnimals';

/** The latest full run's results, committed: what docs/performance.md shows. */
const LATEST_RESULTS = path.join(projectRoot, 'docs', 'bench-results.md');

interface Options {
  rounds: number;
  duration: number;
  connections: number;
  pets: number;
  deepPets: number;
  smoke: boolean;
  scale: boolean;
  deep: boolean;
}

function parseOptions(argv: string[]): Options {
  const num = (name: string, fallback: number) => positiveIntegerOption(argv, name, fallback);
  const smoke = argv.includes('--smoke');
  return {
    rounds: num('rounds', smoke ? 1 : 3),
    duration: num('duration', smoke ? 1 : 5),
    connections: num('connections', 50),
    pets: num('pets', smoke ? 1_000 : 100_000),
    deepPets: num('deep-pets', smoke ? 2_000 : 1_000_000),
    smoke,
    scale: argv.includes('--scale'),
    deep: argv.includes('--deep'),
  };
}

type Contestant = 'node' | 'bare' | 'openapiBackend' | 'openapiValidator' | 'product' | 'logged' | 'validated' | 'unlimited';
const CONTESTANTS: Contestant[] = ['node', 'bare', 'openapiBackend', 'openapiValidator', 'product', 'logged', 'validated', 'unlimited'];
const LABEL: Record<Contestant, string> = {
  node: 'node:http limit',
  bare: 'bare express floor',
  openapiBackend: 'express + openapi-backend (as documented)',
  openapiValidator: 'express + express-openapi-validator',
  product: 'product',
  logged: 'product, VALIDATE_RESPONSES=log',
  validated: 'product, VALIDATE_RESPONSES=enforce',
  unlimited: 'product, RATE_LIMIT=off',
};
/** What each contestant is started as: the product's built entry with its environment, or a server of scripts/bench/. */
const START: Record<Contestant, { product: NodeJS.ProcessEnv } | { serve: string }> = {
  node: { serve: 'node' },
  bare: { serve: 'bare' },
  openapiBackend: { serve: 'openapi-backend' },
  openapiValidator: { serve: 'express-openapi-validator' },
  product: { product: { VALIDATE_RESPONSES: 'off' } },
  logged: { product: { VALIDATE_RESPONSES: 'log' } },
  validated: { product: { VALIDATE_RESPONSES: 'enforce' } },
  unlimited: { product: { VALIDATE_RESPONSES: 'off', RATE_LIMIT: 'off' } },
};

interface Scenario {
  name: string;
  database: boolean;
  expected: number;
  /** autocannon's options for it; `path` is joined to the server's origin. */
  request: (key: string, pets: number) => Pick<autocannon.Options, 'method' | 'headers' | 'body' | 'requests'> & { path?: string };
}

const auth = (key: string) => ({ authorization: `Bearer ${key}` });
const SCENARIOS: Scenario[] = [
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

interface Measurement {
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  unexpected: number;
  rssMb: number;
}

/** Resident memory of a process and its children (cluster workers), in MB: the largest one. */
function rssOf(pid: number): number {
  const rss = (p: number) => {
    try {
      return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${p}/status`, 'utf8'))?.[1] ?? 0) / 1024;
    } catch {
      return 0;
    }
  };
  return Math.max(rss(pid), ...childrenOf(pid).map(rss));
}

async function measure(server: ServerProcess, scenario: Scenario, key: string, o: Options): Promise<Measurement> {
  let rssMb = 0;
  const sampler = setInterval(() => (rssMb = Math.max(rssMb, rssOf(server.child.pid as number))), 250);
  const { path: requestPath = '', ...options } = scenario.request(key, o.pets);
  const result = await autocannon({
    url: `${new URL(server.baseUrl).origin}${requestPath}`,
    connections: o.connections,
    duration: o.duration,
    ...options,
  });
  clearInterval(sampler);
  rssMb = Math.max(rssMb, rssOf(server.child.pid as number));
  const byStatus = result.statusCodeStats as unknown as Record<string, { count: number }>;
  const unexpected = Object.entries(byStatus).reduce((n, [code, s]) => (Number(code) === scenario.expected ? n : n + s.count), 0);
  if (process.env.BENCH_DEBUG) process.stderr.write(`${scenario.name} ${JSON.stringify(byStatus)} non2xx=${result.non2xx}\n`);
  return {
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors + result.timeouts,
    unexpected,
    rssMb,
  };
}

/** The median (NaN for none). */
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const at = (i: number) => s[i] ?? Number.NaN;
  return s.length % 2 ? at((s.length - 1) / 2) : (at(s.length / 2 - 1) + at(s.length / 2)) / 2;
};
const geomean = (xs: number[]) => Math.exp(xs.reduce((a, x) => a + Math.log(x), 0) / xs.length);
const f2 = (x: number) => x.toFixed(2);

/** From spawning the built product to its first 200 on GET /v1/pets, in ms. */
async function startupMs(env: NodeJS.ProcessEnv, key: string): Promise<number> {
  const port = await freePort();
  const started = performance.now();
  const server = startProduct({ ...env, PORT: String(port) });
  for (;;) {
    try {
      const res = await fetch(`http://127.0.0.1:${port}/v1/pets?limit=1`, { headers: auth(key) });
      if (res.status === 200) break;
    } catch {
      // Not listening yet.
    }
    if (performance.now() - started > 30_000) throw new Error('the product served no 200 within 30 s of being started');
    await new Promise((r) => setTimeout(r, 2));
  }
  const ms = performance.now() - started;
  await (await server).stop();
  return ms;
}

async function scaleCheck(adminUrl: string, key: string, o: Options, out: (line: string) => void, logFile: LogFile): Promise<boolean> {
  // listPets by status: the scenario whose plan could degrade with the table's size.
  const scenario = SCENARIOS.find((s) => s.name === 'GET /v1/pets?status=available&limit=100');
  if (!scenario) throw new Error('the listPets-by-status scenario is missing');
  const db = await scratchDatabase(adminUrl, 'animal_store_bench_scale');
  const sql = connect(db.url, { max: 1 });
  try {
    await migrate(sql);
    const p99At = async (count: number) => {
      await seedSampleAnimals(sql, count);
      await sql`ANALYZE pets`;
      const server = await startProduct(
        { DATABASE_URL: db.url, API_KEYS: key, RATE_LIMIT: UNREACHABLE_RATE_LIMIT },
        logFile(`scale-${count}`),
      );
      try {
        await measure(server, scenario, key, { ...o, duration: 2 });
        const runs = [];
        for (let i = 0; i < o.rounds; i++) runs.push((await measure(server, scenario, key, o)).p99);
        return median(runs);
      } finally {
        await server.stop();
      }
    };
    const small = await p99At(10_000);
    const large = await p99At(1_000_000);
    const ratio = large / small;
    out(`\n## Scale: ${scenario.name}, p99\n`);
    out(`| animals | p99 (ms) |\n|---|---|\n| 10,000 | ${small} |\n| 1,000,000 | ${large} |\n`);
    out(`p99 at 1,000,000 / p99 at 10,000 = ${f2(ratio)} (target ≤ 1.25: ${ratio <= 1.25 ? 'met' : 'NOT met'})`);
    return ratio <= 1.25;
  } finally {
    await sql.end();
    await db.drop();
  }
}

/**
 * Follows Link rel="next" from `first` (pages of 100) until `fraction` of `total` animals were
 * seen; returns the next page's URL from there: a cursor obtained the way a client obtains one.
 */
async function followLinks(origin: string, key: string, first: string, total: number, fraction: number): Promise<string> {
  let url = first;
  for (let seen = 0; ;) {
    const res = await fetch(`${origin}${url}`, { headers: auth(key) });
    if (res.status !== 200) throw new Error(`following the links: ${url} answered ${res.status}`);
    seen += ((await res.json()) as unknown[]).length;
    const next = /^<([^>]+)>; rel="next"$/.exec(res.headers.get('link') ?? '')?.[1];
    if (next === undefined) throw new Error(`following the links from ${first}: the last page came after ${seen} animals`);
    if (seen >= total * fraction) return next;
    url = next;
  }
}

interface DeepPages {
  ok: boolean;
  /** Every run got only the expected status, without errors. */
  clean: boolean;
}

/**
 * The deep page beside the first: on `o.deepPets` animals, the product as production runs it,
 * a page 90% of the way through the catalogue (and through the available animals), reached by
 * following the links, loaded like the first page, interleaved with it round by round.
 */
async function deepPages(adminUrl: string, key: string, o: Options, out: (line: string) => void, logFile: LogFile): Promise<DeepPages> {
  const db = await scratchDatabase(adminUrl, 'animal_store_bench_deep');
  const sql = connect(db.url, { max: 1 });
  let server: ServerProcess | undefined;
  try {
    await migrate(sql);
    process.stdout.write(`bench: seeding ${o.deepPets.toLocaleString('en')} animals for the deep page…\n`);
    await seedSampleAnimals(sql, o.deepPets);
    await sql`VACUUM ANALYZE pets`;
    server = await startProduct(
      { DATABASE_URL: db.url, API_KEYS: key, RATE_LIMIT: UNREACHABLE_RATE_LIMIT, LOG_LEVEL: 'info', VALIDATE_RESPONSES: 'off' },
      logFile('deep'),
    );
    const origin = new URL(server.baseUrl).origin;
    const page = (name: string, path: string): Scenario => ({
      name,
      database: true,
      expected: 200,
      request: (k) => ({ method: 'GET', path, headers: auth(k) }),
    });
    process.stdout.write('bench: following the links 90% of the way through the catalogue…\n');
    const started = performance.now();
    // Pages of 100 to get there; the deep page is then asked for with the first page's limit, as a client may change it.
    const deepAll = (await followLinks(origin, key, '/v1/pets?limit=100', o.deepPets, 0.9)).replace('limit=100', 'limit=20');
    const deepAvailable = (await followLinks(origin, key, '/v1/pets?status=available&limit=100', o.deepPets / 3, 0.9)).replace(
      'limit=100',
      'limit=20',
    );
    const walkSeconds = (performance.now() - started) / 1000;
    const pairs = [
      [page('first page: GET /v1/pets?limit=20', '/v1/pets?limit=20'), page('deep page: the same, 90% through', deepAll)],
      [
        page('first page: GET /v1/pets?status=available&limit=20', '/v1/pets?status=available&limit=20'),
        page('deep page: the same, 90% through', deepAvailable),
      ],
    ] as const;
    out('');
    out(`## Deep pages: listPets far into ${o.deepPets.toLocaleString('en')} animals\n`);
    out(
      `A page 90% of the way through the catalogue (and through the available animals), its cursor reached by following Link rel="next" from the first page (pages of 100; ${walkSeconds.toFixed(1)} s), asked for with limit=20 beside the first page; ${o.rounds} interleaved round(s) after a warm-up; the product as production runs it.\n`,
    );
    out('| page | req/s (median) | p50 ms | p99 ms | errors | unexpected |');
    out('|---|---|---|---|---|---|');
    let ok = true;
    let clean = true;
    const ratios: string[] = [];
    for (const pair of pairs) {
      const runs = pair.map(() => [] as Measurement[]);
      for (let round = o.smoke ? 1 : 0; round <= o.rounds; round++) {
        for (const i of round % 2 ? [1, 0] : [0, 1]) {
          const m = await measure(server, pair[i] as Scenario, key, o);
          if (round > 0) runs[i]?.push(m);
        }
      }
      pair.forEach((scenario, i) => {
        const ms = runs[i] ?? [];
        clean &&= ms.every((m) => m.errors === 0 && m.unexpected === 0);
        out(
          `| ${scenario.name} | ${Math.round(median(ms.map((m) => m.rps)))} | ${median(ms.map((m) => m.p50))} | ${median(ms.map((m) => m.p99))} | ${ms.reduce((a, m) => a + m.errors, 0)} | ${ms.reduce((a, m) => a + m.unexpected, 0)} |`,
        );
      });
      const p99 = (i: number) => median((runs[i] ?? []).map((m) => m.p99));
      const ratio = p99(1) / Math.max(1, p99(0));
      ok &&= ratio <= 1.25;
      ratios.push(`${pair[0].name.replace('first page: ', '')}: ${f2(ratio)}`);
    }
    out(`\np99 deep page / first page: ${ratios.join('; ')} (target ≤ 1.25: ${ok ? 'met' : 'NOT met'})`);
    return { ok, clean };
  } finally {
    await server?.stop();
    await sql.end();
    await db.drop();
  }
}

async function main(argv: string[]): Promise<number> {
  const o = parseOptions(argv);
  const adminUrl = process.env.DATABASE_URL;
  if (!adminUrl) {
    process.stderr.write('bench: set DATABASE_URL to a PostgreSQL server (the bench makes and drops a database of its own there)\n');
    return 2;
  }
  const lines: string[] = [];
  const out = (line: string) => {
    lines.push(line);
    process.stdout.write(`${line}\n`);
  };
  const key = randomBytes(24).toString('base64url');

  process.stdout.write('bench: building…\n');
  await runToEnd(['npm', 'run', '-s', 'build']);
  // The servers' request logs go to files here, not through this process, which runs the load generator.
  const logs = mkdtempSync(path.join(tmpdir(), 'animal-store-bench-'));
  const logFile = (name: string) => ({ logFile: path.join(logs, `${name}.log`) });
  try {
    if (o.scale) {
      out(`# Benchmark (--scale), ${new Date().toISOString()}`);
      return (await scaleCheck(adminUrl, key, o, out, logFile)) ? 0 : 1;
    }
    if (o.deep) {
      out(`# Benchmark (--deep), ${new Date().toISOString()}`);
      const deep = await deepPages(adminUrl, key, o, out, logFile);
      return deep.ok && deep.clean ? 0 : 1;
    }
    return await compare(adminUrl, key, o, out, lines, logFile);
  } finally {
    rmSync(logs, { recursive: true, force: true });
  }
}

type LogFile = (name: string) => StartOptions;

/** The contestants side by side: prints and writes the tables and targets; 0 when the targets (smoke: the expected statuses) hold. */
async function compare(
  adminUrl: string,
  key: string,
  o: Options,
  out: (line: string) => void,
  lines: string[],
  logFile: LogFile,
): Promise<number> {
  const db = await scratchDatabase(adminUrl, 'animal_store_bench');
  const servers: Partial<Record<Contestant, ServerProcess>> = {};
  try {
    const sql = connect(db.url, { max: 1 });
    await migrate(sql);
    await seedSampleAnimals(sql, o.pets);
    await sql`ANALYZE pets`;
    await sql.end();

    // The rate limiter runs (product and floor) with a limit the bench cannot reach.
    const env = { DATABASE_URL: db.url, API_KEYS: key, RATE_LIMIT: UNREACHABLE_RATE_LIMIT };
    const startups = [];
    for (let i = 0; i < (o.smoke ? 1 : 3); i++) startups.push(await startupMs(env, key));
    const ts = ['-r', 'ts-node/register/transpile-only'];
    await Promise.all(
      CONTESTANTS.map(async (c) => {
        const how = START[c];
        servers[c] =
          'product' in how
            ? await startProduct({ ...env, LOG_LEVEL: 'info', ...how.product }, logFile(c))
            : await startServerProcess([process.execPath, ...ts, 'scripts/bench/serve.ts', how.serve], { ...env, PORT: '0' }, logFile(c));
      }),
    );

    out(`# Benchmark, ${new Date().toISOString()}`);
    out('');
    out(
      `${o.pets.toLocaleString('en')} animals; ${o.connections} connections; ${o.duration} s per run; ${o.rounds} round(s) after a discarded warm-up round${o.smoke ? ' (smoke: no warm-up)' : ''}; contestants interleaved in each round (${CONTESTANTS.map((c) => LABEL[c]).join(', ')}). The product as production runs it: request log line at info, metrics, request id, security headers, rate limiter on with a limit the bench cannot reach, VALIDATE_RESPONSES=off. Machine: ${readFileSync('/proc/cpuinfo', 'utf8').match(/^processor/gm)?.length ?? '?'} cores shared by servers, PostgreSQL and load generator.`,
    );
    out(
      `Start-up of the product (spawn to first 200 on a real PostgreSQL): ${startups.map((ms) => `${Math.round(ms)} ms`).join(', ')} (target < 1000 ms: ${median(startups) < 1000 ? 'met' : 'NOT met'})`,
    );

    const perScenario: { scenario: Scenario; runs: Record<Contestant, Measurement[]> }[] = [];
    for (const scenario of SCENARIOS) {
      const runs = Object.fromEntries(CONTESTANTS.map((c) => [c, []])) as unknown as Record<Contestant, Measurement[]>;
      for (let round = o.smoke ? 1 : 0; round <= o.rounds; round++) {
        // Each round starts one contestant further along, so that none is always first or last in a round.
        const order = CONTESTANTS.map((_, i) => CONTESTANTS[(i + round) % CONTESTANTS.length] as Contestant);
        for (const c of order) {
          const m = await measure(servers[c] as ServerProcess, scenario, key, o);
          if (round > 0) runs[c].push(m);
        }
      }
      perScenario.push({ scenario, runs });
      // The rows a scenario inserted are vacuumed now, not by autovacuum during the next scenario's runs.
      if (scenario.database) {
        const admin = connect(db.url, { max: 1 });
        await admin`VACUUM ANALYZE pets`;
        await admin.end();
      }
      process.stdout.write(`bench: ${scenario.name} done\n`);
    }

    out('');
    out('| scenario | contestant | req/s (median) | p50 ms | p99 ms | errors | unexpected | max RSS MB |');
    out('|---|---|---|---|---|---|---|---|');
    for (const { scenario, runs } of perScenario) {
      for (const c of CONTESTANTS) {
        const ms = runs[c];
        out(
          `| ${scenario.name} | ${LABEL[c]} | ${Math.round(median(ms.map((m) => m.rps)))} | ${median(ms.map((m) => m.p50))} | ${median(ms.map((m) => m.p99))} | ${ms.reduce((a, m) => a + m.errors, 0)} | ${ms.reduce((a, m) => a + m.unexpected, 0)} | ${Math.round(Math.max(...ms.map((m) => m.rssMb)))} |`,
        );
      }
    }

    // Throughput ratios, per round (the contestants of a round ran back to back), then their median.
    const ratios = (a: Contestant, b: Contestant, runs: Record<Contestant, Measurement[]>) =>
      runs[a].map((m, i) => m.rps / (runs[b][i]?.rps ?? Number.NaN));
    const COLUMNS: { title: string; a: Contestant; b: Contestant }[] = [
      { title: 'product / bare express floor', a: 'product', b: 'bare' },
      { title: 'product / express + openapi-backend', a: 'product', b: 'openapiBackend' },
      { title: 'product / express + express-openapi-validator', a: 'product', b: 'openapiValidator' },
      { title: 'product / node:http', a: 'product', b: 'node' },
      { title: 'VALIDATE_RESPONSES=log / off', a: 'logged', b: 'product' },
      { title: 'VALIDATE_RESPONSES=enforce / off', a: 'validated', b: 'product' },
      // The rate limiter's cost per request: the product with it (its limit unreachable) over the product without.
      { title: 'RATE_LIMIT on / off', a: 'product', b: 'unlimited' },
    ];
    out('');
    out(`Throughput ratios per round → median:\n`);
    out(`| scenario | ${COLUMNS.map((c) => c.title).join(' | ')} | p99 product / bare floor |`);
    out(`|---|${COLUMNS.map(() => '---|').join('')}---|`);
    const medians = COLUMNS.map(() => [] as number[]);
    const p99s: number[] = [];
    for (const { scenario, runs } of perScenario) {
      const cells = COLUMNS.map(({ a, b }, i) => {
        const rs = ratios(a, b, runs);
        medians[i]?.push(median(rs));
        return `${rs.map(f2).join(' ')} → **${f2(median(rs))}**`;
      });
      const p99 = median(runs.product.map((m) => m.p99)) / Math.max(1, median(runs.bare.map((m) => m.p99)));
      p99s.push(p99);
      out(`| ${scenario.name} | ${cells.join(' | ')} | ${f2(p99)} |`);
    }
    out(`| geometric mean | ${medians.map((m) => `**${f2(geomean(m))}**`).join(' | ')} | ${f2(geomean(p99s))} |`);
    const column = (a: Contestant, b: Contestant) => medians[COLUMNS.findIndex((c) => c.a === a && c.b === b)] ?? [];
    const lowest = (xs: number[]) => f2(Math.min(...xs));

    const deep = await deepPages(adminUrl, key, o, out, logFile);
    const allRuns = perScenario.flatMap(({ runs }) => CONTESTANTS.flatMap((c) => runs[c]));
    const productRss = Math.max(...perScenario.flatMap(({ runs }) => runs.product.map((m) => m.rssMb)));
    const targets: [string, boolean][] = [
      [
        `product ≥ 0.9× the bare express floor on every scenario (lowest ${lowest(column('product', 'bare'))})`,
        column('product', 'bare').every((r) => r >= 0.9),
      ],
      [
        `product ≥ 1.3× express + openapi-backend on every scenario (lowest ${lowest(column('product', 'openapiBackend'))})`,
        column('product', 'openapiBackend').every((r) => r >= 1.3),
      ],
      [
        `product ≥ 1.3× express + express-openapi-validator on every scenario (lowest ${lowest(column('product', 'openapiValidator'))})`,
        column('product', 'openapiValidator').every((r) => r >= 1.3),
      ],
      [`p99 ≤ 1.25× the bare express floor's on every scenario (highest ${f2(Math.max(...p99s))})`, p99s.every((r) => r <= 1.25)],
      ['zero errors and zero unexpected statuses', deep.clean && allRuns.every((m) => m.errors === 0 && m.unexpected === 0)],
      [`a page 90% through ${o.deepPets.toLocaleString('en')} animals: p99 ≤ 1.25× the first page's`, deep.ok],
      [
        `VALIDATE_RESPONSES=log within 10% of off on every scenario (lowest ${lowest(column('logged', 'product'))})`,
        column('logged', 'product').every((r) => r >= 0.9),
      ],
      [`resident memory under load < 200 MB per process (max ${Math.round(productRss)} MB)`, productRss < 200],
      [`start-up < 1 s (median ${Math.round(median(startups))} ms)`, median(startups) < 1000],
    ];
    out('');
    out('Targets:');
    for (const [what, ok] of targets) out(`- ${ok ? 'met' : 'NOT met'}: ${what}`);
    const dir = path.join(projectRoot, 'scripts', 'bench', 'results');
    mkdirSync(dir, { recursive: true });
    const file = path.join(dir, `${new Date().toISOString().replace(/[:.]/g, '-')}${o.smoke ? '-smoke' : ''}.md`);
    writeFileSync(file, `${lines.join('\n')}\n`);
    process.stdout.write(`bench: written to ${path.relative(projectRoot, file)}\n`);
    // A full run's results are also the committed latest ones, which docs/performance.md links: never typed by hand.
    if (!o.smoke) {
      writeFileSync(LATEST_RESULTS, `${lines.join('\n')}\n`);
      process.stdout.write(`bench: and to ${path.relative(projectRoot, LATEST_RESULTS)} (commit it)\n`);
    }
    const failed = !deep.clean || allRuns.some((m) => m.errors > 0 || m.unexpected > 0);
    // The smoke form asserts no targets, only that every run got what it expected.
    return o.smoke ? (failed ? 1 : 0) : targets.every(([, ok]) => ok) ? 0 : 1;
  } finally {
    await Promise.all(Object.values(servers).map((s) => s?.stop()));
    await db.drop();
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`bench failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
