/**
 * npm run bench [-- --rounds N] [--duration S] [--warmup S] [--connections N] [--pets N] [--deep-pets N] [--webhook-rate N] [--smoke] [--scale] [--deep] [--mcp] [--webhooks] [--scenarios 0,3]
 *
 * The product as production runs it, against the baselines kept in scripts/bench/ (the
 * node:http limit and the bare express floor, and for information the floor on the product's
 * server, `createHttpServer`), the three alternatives a user would pick instead
 * (express 5 + openapi-backend as documented, express 5 + express-openapi-validator, fastify 5
 * with route schemas), each on its own store as postgres.js documents it (plainStore.ts), and
 * itself with VALIDATE_RESPONSES=log and =enforce (the cost of checking each reply) and with
 * RATE_LIMIT=off (the cost of the rate limiter), on a database of its own on DATABASE_URL
 * seeded with --pets animals (100,000; statuses evenly spread), all loaded with autocannon over
 * loopback in rounds (5): every contestant is started afresh for each round and warmed on every
 * scenario (runs of --warmup, 1 s, until its CPU per request holds), then each scenario runs on every contestant in turn (--duration, 4 s),
 * each measured run right after one of --warmup on the same contestant.
 * Every server runs compiled JavaScript from dist/. Prints per contestant and scenario the medians
 * of server CPU time per request, req/s and p99, the ratios per round with their medians and
 * geometric means (server CPU per request decides the targets; req/s and p99 are beside),
 * start-up times (the product's beside the bare floor's) and memory, and checks the targets;
 * writes the same as Markdown to scripts/bench/results/ and, for a full run, to
 * docs/bench-results.md (committed), with each CPU ratio beside the previous full run's
 * (docs/bench-results.json, which it then replaces). Then the deep page (deep.ts, with the
 * conditional re-read and MCP sections) and the webhooks (webhooks.ts). --smoke: one short round,
 * no warm-up, a small table and small deep-page and webhook checks, no targets. --deep: the deep
 * page alone. --mcp: the MCP section alone, on --pets animals. --webhooks: the webhooks alone.
 * --scale: the listPets-by-status p99 at 10,000 and at 1,000,000 animals. --scenarios: only
 * these scenarios (indexes into SCENARIOS), a partial run for an A/B: tables only, no deep page or
 * targets, never written to docs/bench-results.md.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { connect } from '../../src/store/database/db';
import { projectRoot } from '../../src/paths';
import { migrate } from '../../src/store/database/migrate';
import { createKey } from '../../src/store/keys/admin';
import { scopes } from '../../generated/security';
import {
  type ServerProcess,
  UNREACHABLE_RATE_LIMIT,
  freePort,
  positiveIntegerOption,
  runToEnd,
  scratchDatabase,
  startProduct,
  startServerProcess,
} from '../lib/processes';
import { seedSampleAnimals } from '../db/sampleAnimals';
import { type LogFile, deepPages, mcpAlone, scaleCheck } from './deep';
import { otlpSink } from './otlpSink';
import { type WebhookLoad, webhookDeliveries } from './webhooks';
import { type Measurement, SCENARIOS, auth, joinRuns, measureWarm, sameAnswersAsTheProduct, warmUp } from './measure';
import {
  CONTESTANTS,
  type Contestant,
  LABEL,
  type Results,
  type RunFigures,
  type Startups,
  againstPrevious,
  printTables,
  runFigures,
  verdict,
} from './report';
import { scratchServerUrl } from '../lib/database';
import { runTool } from '../lib/tool';
import { wrapMarkdown } from '../lib/text';

/**
 * Every contestant's pool: the servers run side by side, and each keeps its connections for a
 * while after its run, so together they must stay within PostgreSQL's default max_connections
 * (100, three kept for superusers): 6 baselines and alternatives of 7 connections, 6 runs of the
 * product of 8 (7, and its key registry's own) and the bench's own: 94.
 */
const POOL_SIZE = 7;

/** The latest full run's results, committed: what docs/performance.md shows. */
const LATEST_RESULTS = path.join(projectRoot, 'docs', 'bench-results.md');
/** Its CPU ratios, committed beside it: what the next full run compares its own with. */
const LATEST_FIGURES = path.join(projectRoot, 'docs', 'bench-results.json');
/** The page's opening, as every page of docs/ has: whom it is for. */
const BENCH_RESULTS_OPENING = [
  'For contributors and operators who want the figures: the last full `npm run bench`, written by it.',
  '`docs/performance.md` says what it compares, how to run it and what the figures led to.',
].join('\n');

interface Options extends WebhookLoad {
  /** Seconds of each warm-up run (`warmUp`) a contestant's fresh process gets on each scenario before the round's measured runs. */
  warmup: number;
  scale: boolean;
  deep: boolean;
  mcp: boolean;
  webhooks: boolean;
  /** --scenarios: the indexes of the scenarios to run (a partial run); absent: all. */
  scenarios?: number[];
}

/** --scenarios 0,3: indexes into SCENARIOS. */
function scenariosOption(argv: string[]): number[] | undefined {
  const at = argv.indexOf('--scenarios');
  if (at < 0) return undefined;
  const list = (argv[at + 1] ?? '').split(',').map(Number);
  if (list.length === 0 || list.some((i) => !Number.isInteger(i) || i < 0 || i >= SCENARIOS.length))
    throw new Error(`--scenarios takes indexes from 0 to ${SCENARIOS.length - 1}, comma-separated`);
  return list;
}

function parseOptions(argv: string[]): Options {
  const num = (name: string, fallback: number) => positiveIntegerOption(argv, name, fallback);
  const smoke = argv.includes('--smoke');
  return {
    // Five rounds: the least for a verdict on a machine the servers share with PostgreSQL and the load generator.
    rounds: num('rounds', smoke ? 1 : 5),
    // 4 s a run: CPU per request, which decides, holds within a few thousand requests; the rounds, not a run's length, steady it.
    duration: num('duration', smoke ? 1 : 4),
    warmup: smoke ? 0 : num('warmup', 1),
    connections: num('connections', 50),
    pets: num('pets', smoke ? 1_000 : 100_000),
    deepPets: num('deep-pets', smoke ? 2_000 : 1_000_000),
    webhookRate: num('webhook-rate', smoke ? 50 : 200),
    smoke,
    scale: argv.includes('--scale'),
    deep: argv.includes('--deep'),
    mcp: argv.includes('--mcp'),
    webhooks: argv.includes('--webhooks'),
    scenarios: scenariosOption(argv),
  };
}

/** What each contestant is started as: the product's built entry with its environment, or a server of scripts/bench/. */
const START: Record<Contestant, { product: NodeJS.ProcessEnv } | { serve: string }> = {
  node: { serve: 'node' },
  bare: { serve: 'bare' },
  bareBorn: { serve: 'bare-born' },
  openapiBackend: { serve: 'openapi-backend' },
  openapiValidator: { serve: 'express-openapi-validator' },
  fastify: { serve: 'fastify' },
  product: { product: { VALIDATE_RESPONSES: 'off' } },
  // The same, its requests made with a managed key (runAll): the key registry's cost per request.
  keyed: { product: { VALIDATE_RESPONSES: 'off' } },
  logged: { product: { VALIDATE_RESPONSES: 'log' } },
  validated: { product: { VALIDATE_RESPONSES: 'enforce' } },
  unlimited: { product: { VALIDATE_RESPONSES: 'off', RATE_LIMIT: 'off' } },
  // Every request traced; the spans go to a receiver in this process that discards them (otlpSink).
  traced: { product: { VALIDATE_RESPONSES: 'off', OTEL_TRACES_EXPORTER: 'otlp', OTEL_TRACES_SAMPLER: 'always_on' } },
};

/** A baseline or alternative of scripts/bench/, compiled into dist/ as the product is (bench's tsconfig.build.json). */
const serveBuilt = (kind: string, env: NodeJS.ProcessEnv, options?: ReturnType<LogFile>) =>
  startServerProcess([process.execPath, 'dist/scripts/bench/serve.js', kind], { PORT: '0', ...env }, options);

/** The commit measured (with "+ changes" when the tree differs from it), for the results' heading. */
function commitOf(): string {
  try {
    const git = (...args: string[]) => execFileSync('git', args, { cwd: projectRoot, encoding: 'utf8' }).trim();
    return `${git('rev-parse', '--short', 'HEAD')}${git('status', '--porcelain', '--untracked-files=no') ? ' + changes' : ''}`;
  } catch {
    return 'an unknown commit';
  }
}

/** From spawning a server (started by `start` on `port`) to its first 200 on GET /v1/pets, in ms. */
async function startupMs(start: (port: number) => Promise<ServerProcess>, key: string): Promise<number> {
  const port = await freePort();
  const started = performance.now();
  const server = start(port);
  try {
    for (;;) {
      try {
        const res = await fetch(`http://127.0.0.1:${port}/v1/pets?limit=1`, { headers: auth(key) });
        if (res.status === 200) return performance.now() - started;
      } catch {
        // Not listening yet.
      }
      if (performance.now() - started > 30_000) throw new Error('the server served no 200 within 30 s of being started');
      await new Promise((r) => setTimeout(r, 2));
    }
  } finally {
    // Stopped whether it answered or not: a failed start-up leaves no server behind.
    await (await server).stop();
  }
}

async function main(argv: string[]): Promise<number> {
  const o = parseOptions(argv);
  const adminUrl = scratchServerUrl('bench');
  if (!adminUrl) return 2;
  const lines: string[] = [];
  // What the bench writes is a Markdown page (docs/bench-results.md): its prose is wrapped here, as it is written.
  const out = (text: string) => {
    for (const line of wrapMarkdown(text)) {
      lines.push(line);
      process.stdout.write(`${line}\n`);
    }
  };
  const key = randomBytes(24).toString('base64url');

  process.stdout.write('bench: building…\n');
  await runToEnd(['npm', 'run', '-s', 'build']);
  await runToEnd([process.execPath, require.resolve('typescript/bin/tsc'), '-p', 'scripts/bench/tsconfig.build.json']);
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
    if (o.mcp) {
      out(`# Benchmark (--mcp), ${new Date().toISOString()}`);
      const mcp = await mcpAlone(adminUrl, key, o, out, logFile);
      return mcp.clean && (o.smoke || mcp.ratios.every((r) => r.cpuRatio <= 1.3)) ? 0 : 1;
    }
    if (o.webhooks) {
      out(`# Benchmark (--webhooks), ${new Date().toISOString()}`);
      const hooks = await webhookDeliveries(adminUrl, key, o, out, logFile);
      const ok = hooks.clean && hooks.lost === 0 && hooks.duplicates === 0 && (o.smoke || hooks.cpuRatio <= 1.1);
      return ok ? 0 : 1;
    }
    const code = await compare(adminUrl, key, o, out, logFile);
    const dir = path.join(projectRoot, 'scripts', 'bench', 'results');
    mkdirSync(dir, { recursive: true });
    const kind = o.smoke ? '-smoke' : o.scenarios ? '-partial' : '';
    const file = path.join(dir, `${new Date().toISOString().replace(/[:.]/g, '-')}${kind}.md`);
    writeFileSync(file, `${lines.join('\n')}\n`);
    process.stdout.write(`bench: written to ${path.relative(projectRoot, file)}\n`);
    // A full run's results are also the committed latest ones, which docs/performance.md links: never typed by hand.
    if (!o.smoke && !o.scenarios) {
      writeFileSync(LATEST_RESULTS, `${lines.join('\n')}\n`);
      process.stdout.write(`bench: and to ${path.relative(projectRoot, LATEST_RESULTS)} (commit it)\n`);
    }
    return code;
  } finally {
    rmSync(logs, { recursive: true, force: true });
  }
}

/** Start-up of the product and of the bare floor, interleaved: three of each (smoke: one). */
async function startups(env: NodeJS.ProcessEnv, key: string, o: Options): Promise<Startups> {
  const times: Startups = { product: [], bare: [] };
  for (let i = 0; i < (o.smoke ? 1 : 3); i++) {
    for (const which of i % 2 ? (['bare', 'product'] as const) : (['product', 'bare'] as const)) {
      const start =
        which === 'product'
          ? (port: number) => startProduct({ ...env, PORT: String(port) })
          : (port: number) => serveBuilt('bare', { ...env, PORT: String(port) });
      times[which].push(await startupMs(start, key));
    }
  }
  return times;
}

/**
 * Every contestant's runs of every scenario, in rounds. Each round starts every contestant afresh
 * (`start`), so that no process carries an earlier round's heap, code or connections into the
 * next, and warms each on every scenario (`warmUp`: runs of `o.warmup` seconds, discarded, until
 * its CPU per request holds: a fresh process spends its first seconds compiling, and that is no
 * scenario's cost). Then each scenario runs on
 * every contestant in turn, each round and scenario one contestant further along, so that none is
 * always first or last, half of `o.duration` in that order and half in the reverse one (a drift of the
 * machine's speed during the turns weighs on every contestant alike), each measured run right after
 * unmeasured ones on the same contestant until its CPU per request holds again (`measureWarm`: a process idle for
 * minutes since its warm-up is dearer for its first seconds). `keyed` sends the managed key, every other contestant
 * the API_KEYS key.
 */
async function runAll(
  start: (round: number) => Promise<Record<Contestant, ServerProcess>>,
  { key, managedKey }: { key: string; managedKey: string },
  o: Options,
  dbUrl: string,
): Promise<Results> {
  const scenarios = SCENARIOS.filter((_, i) => o.scenarios?.includes(i) ?? true);
  const results: Results = scenarios.map((scenario) => ({
    scenario,
    runs: Object.fromEntries(CONTESTANTS.map((c) => [c, []])) as unknown as Record<Contestant, Measurement[]>,
  }));
  const keyOf = (c: Contestant) => (c === 'keyed' ? managedKey : key);
  for (let round = 0; round < o.rounds; round++) {
    const servers: Partial<Record<Contestant, ServerProcess>> = await start(round);
    // BENCH_DEBUG=1: which contestant each pid of measure()'s lines is.
    if (process.env.BENCH_DEBUG)
      process.stderr.write(`round ${round + 1}: ${CONTESTANTS.map((c) => `${c} pid ${servers[c]?.child.pid}`).join(', ')}\n`);
    try {
      if (round === 0) {
        const others: Record<string, ServerProcess> = {};
        for (const c of CONTESTANTS) if ('serve' in START[c]) others[LABEL[c]] = servers[c] as ServerProcess;
        await sameAnswersAsTheProduct(servers.product as ServerProcess, others, key);
      }
      if (o.warmup > 0)
        for (const c of CONTESTANTS) for (const { scenario } of results) await warmUp(servers[c] as ServerProcess, scenario, keyOf(c), o);
      for (const [s, { scenario, runs }] of results.entries()) {
        const order = CONTESTANTS.map((_, i) => CONTESTANTS[(i + round + s) % CONTESTANTS.length] as Contestant);
        // Half of each run in this order, half in the reverse one, joined: the machine's speed drifting while the
        // contestants take their turns (a minute) weighs on each alike, rather than on the last more than the first.
        const half = { ...o, duration: o.duration / 2 };
        const first = new Map<Contestant, Measurement>();
        for (const c of order) first.set(c, await measureWarm(servers[c] as ServerProcess, scenario, keyOf(c), half));
        for (const c of [...order].reverse()) {
          const second = await measureWarm(servers[c] as ServerProcess, scenario, keyOf(c), half);
          runs[c].push(joinRuns(first.get(c) as Measurement, second));
        }
        // The rows a scenario inserted are vacuumed now, not by autovacuum during the next scenario's runs.
        if (scenario.database) {
          const admin = connect(dbUrl, { max: 1 });
          await admin`VACUUM ANALYZE pets`;
          await admin.end();
        }
      }
    } finally {
      await stopAll(servers);
    }
    process.stdout.write(`bench: round ${round + 1} of ${o.rounds} done\n`);
  }
  return results;
}

/** Stops the servers still running and forgets them (a second call stops nothing). */
async function stopAll(servers: Partial<Record<Contestant, ServerProcess>>): Promise<void> {
  const running = Object.values(servers);
  for (const c of Object.keys(servers) as Contestant[]) delete servers[c];
  await Promise.all(running.map((s) => s?.stop()));
}

/** The contestants side by side: prints the tables and targets; 0 when the targets (smoke: the expected statuses) hold. */
async function compare(adminUrl: string, key: string, o: Options, out: (line: string) => void, logFile: LogFile): Promise<number> {
  const db = await scratchDatabase(adminUrl, 'animal_store_bench');
  let sink: Awaited<ReturnType<typeof otlpSink>> | undefined;
  try {
    const sql = connect(db.url, { max: 1 });
    await migrate(sql);
    await seedSampleAnimals(sql, o.pets);
    await sql`ANALYZE pets`;
    const managedKey = (await createKey(sql, { client: 'bench', scopes: [...scopes], actor: 'bench' })).key;
    await sql.end();

    // The rate limiter runs (product) with a limit the bench cannot reach; the bare floor has none.
    // Spans, where tracing is on, go to a receiver that answers as a collector and keeps nothing.
    sink = await otlpSink();
    const env = {
      DATABASE_URL: db.url,
      API_KEYS: key,
      RATE_LIMIT: UNREACHABLE_RATE_LIMIT,
      OTEL_EXPORTER_OTLP_ENDPOINT: sink.endpoint,
      DATABASE_POOL_SIZE: String(POOL_SIZE),
    };
    const started = await startups(env, key, o);
    // Every contestant, started afresh for a round (a log file each per round: a server's start is read from its own file).
    const startAll = async (round: number) => {
      const servers: Partial<Record<Contestant, ServerProcess>> = {};
      try {
        await Promise.all(
          CONTESTANTS.map(async (c) => {
            const how = START[c];
            servers[c] =
              'product' in how
                ? await startProduct({ ...env, LOG_LEVEL: 'info', ...how.product }, logFile(`${c}-${round}`))
                : await serveBuilt(how.serve, env, logFile(`${c}-${round}`));
          }),
        );
      } catch (err) {
        await stopAll(servers);
        throw err;
      }
      return servers as Record<Contestant, ServerProcess>;
    };

    out(`# Benchmark, ${new Date().toISOString()}, at ${commitOf()}`);
    out('');
    out(BENCH_RESULTS_OPENING);
    out('');
    out(
      `${o.pets.toLocaleString('en')} animals; ${o.connections} connections; ${o.duration} s per run; ${o.rounds} round(s), every contestant started afresh for each; each warmed on every scenario in runs of ${o.warmup} s until two in a row cost the same CPU per request within 10% (at most 8)${o.smoke ? ' (smoke: not warmed)' : ''}, then each scenario runs on every contestant in turn (${CONTESTANTS.map((c) => LABEL[c]).join(', ')}), half of each run in that order and half in the reverse one${o.warmup > 0 ? `, each measured run right after unmeasured ones of ${o.warmup} s on the same contestant until two in a row cost the same CPU per request within 10% (at most 8)` : ''}, each compiled JavaScript run by node. The product as production runs it: request log line at info, metrics, request id, security headers, rate limiter on with a limit the bench cannot reach, VALIDATE_RESPONSES=off. Machine: ${readFileSync('/proc/cpuinfo', 'utf8').match(/^processor/gm)?.length ?? '?'} cores shared by servers, PostgreSQL and load generator.`,
    );
    const results = await runAll(startAll, { key, managedKey }, o, db.url);
    const figures = printTables(results, started, out);
    if (o.scenarios) return 0;
    const deep = await deepPages(adminUrl, key, o, out, logFile);
    const hooks = await webhookDeliveries(adminUrl, key, o, out, logFile);
    const code = verdict(results, figures, started, deep, hooks, o, out);
    if (!o.smoke) {
      const now = runFigures(results, figures, new Date().toISOString(), commitOf());
      if (existsSync(LATEST_FIGURES)) againstPrevious(now, JSON.parse(readFileSync(LATEST_FIGURES, 'utf8')) as RunFigures, out);
      writeFileSync(LATEST_FIGURES, `${JSON.stringify(now, null, 2)}\n`);
    }
    return code;
  } finally {
    await sink?.close();
    await db.drop();
  }
}

runTool('bench failed', () => main(process.argv.slice(2)), { stack: true });
