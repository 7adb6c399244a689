/**
 * The bench's checks of listPets at depth and at scale, on databases of their own: a page far
 * into 1,000,000 animals, reached through the cursor, beside the first page (`deepPages`), and
 * listPets by status at 10,000 and at 1,000,000 animals (`scaleCheck`).
 */
import { connect } from '../../src/store/database/db';
import { migrate } from '../../src/store/database/migrate';
import { type ServerProcess, type StartOptions, UNREACHABLE_RATE_LIMIT, scratchDatabase, startProduct } from '../lib/processes';
import { seedSampleAnimals } from '../db/sampleAnimals';
import { conditionalReads } from './conditional';
import { mcpCalls } from './mcp';
import { type Load, type Measurement, type Scenario, SCENARIOS, auth, f2, measure, median } from './measure';

/** Where a server started by the bench writes its output. */
export type LogFile = (name: string) => StartOptions;

/** The rounds of a check, with the load of each run; `smoke`: no warm-up round. */
export interface Depth extends Load {
  rounds: number;
  deepPets: number;
  smoke: boolean;
}

export async function scaleCheck(adminUrl: string, key: string, o: Depth, out: (line: string) => void, logFile: LogFile): Promise<boolean> {
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

/** The product as production runs it, with MCP on, on the database at `url`: the deep page's server and the MCP section's. */
const withMcp = (url: string, key: string): NodeJS.ProcessEnv => ({
  DATABASE_URL: url,
  API_KEYS: key,
  RATE_LIMIT: UNREACHABLE_RATE_LIMIT,
  LOG_LEVEL: 'info',
  VALIDATE_RESPONSES: 'off',
  MCP_ENABLED: 'true',
});

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

export interface DeepPages {
  ok: boolean;
  /** Every run got only the expected status, without errors. */
  clean: boolean;
  /** The MCP tool call's CPU over the direct read's, at each connection count measured. */
  mcp: { connections: number; cpuRatio: number }[];
}

/**
 * The deep page beside the first: on `o.deepPets` animals, the product as production runs it,
 * a page 90% of the way through the catalogue (and through the available animals), reached by
 * following the links, loaded like the first page, interleaved with it round by round.
 */
export async function deepPages(
  adminUrl: string,
  key: string,
  o: Depth,
  out: (line: string) => void,
  logFile: LogFile,
): Promise<DeepPages> {
  const db = await scratchDatabase(adminUrl, 'animal_store_bench_deep');
  const sql = connect(db.url, { max: 1 });
  let server: ServerProcess | undefined;
  try {
    await migrate(sql);
    process.stdout.write(`bench: seeding ${o.deepPets.toLocaleString('en')} animals for the deep page…\n`);
    await seedSampleAnimals(sql, o.deepPets);
    await sql`VACUUM ANALYZE pets`;
    server = await startProduct(withMcp(db.url, key), logFile('deep'));
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
    // One category of 20 and one status of 3 (seedSampleAnimals): a sixtieth of the catalogue, by migration 0006's index.
    const filtered = '/v1/pets?status=available&categoryId=3&limit=20';
    // Pages of 100 to get there, fewer where the filter holds fewer animals (a smoke run's catalogue).
    const step = Math.min(100, Math.max(1, Math.floor(o.deepPets / 60 / 20)));
    const deepFiltered = (await followLinks(origin, key, filtered.replace('limit=20', `limit=${step}`), o.deepPets / 60, 0.9)).replace(
      `limit=${step}`,
      'limit=20',
    );
    const walkSeconds = (performance.now() - started) / 1000;
    const pairs = [
      [page('first page: GET /v1/pets?limit=20', '/v1/pets?limit=20'), page('deep page: the same, 90% through', deepAll)],
      [
        page('first page: GET /v1/pets?status=available&limit=20', '/v1/pets?status=available&limit=20'),
        page('deep page: the same, 90% through', deepAvailable),
      ],
      [page(`first page: GET ${filtered}`, filtered), page('deep page: the same, 90% through', deepFiltered)],
    ] as const;
    out('');
    out(`## Deep pages: listPets far into ${o.deepPets.toLocaleString('en')} animals\n`);
    out(
      `A page 90% of the way through the catalogue (through the available animals; through the available animals of category 3), its cursor reached by following Link rel="next" from the first page (pages of 100; ${walkSeconds.toFixed(1)} s), asked for with limit=20 beside the first page; ${o.rounds} interleaved round(s) after a warm-up; the product as production runs it.\n`,
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
    clean &&= (await conditionalReads(server, key, o, out)).clean;
    const mcp = await mcpCalls(server, key, o, out);
    return { ok, clean: clean && mcp.clean, mcp: mcp.ratios };
  } finally {
    await server?.stop();
    await sql.end();
    await db.drop();
  }
}

/** The MCP section alone (`--mcp`): the product with MCP_ENABLED on `o.pets` animals, the tool call beside the direct read. */
export async function mcpAlone(adminUrl: string, key: string, o: Depth, out: (line: string) => void, logFile: LogFile) {
  const db = await scratchDatabase(adminUrl, 'animal_store_bench_mcp');
  const sql = connect(db.url, { max: 1 });
  let server: ServerProcess | undefined;
  try {
    await migrate(sql);
    await seedSampleAnimals(sql, o.pets);
    await sql`VACUUM ANALYZE pets`;
    server = await startProduct(withMcp(db.url, key), logFile('mcp'));
    return await mcpCalls(server, key, o, out);
  } finally {
    await server?.stop();
    await sql.end();
    await db.drop();
  }
}
