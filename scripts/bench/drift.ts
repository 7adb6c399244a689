/**
 * npm run bench:drift [-- --contestant bare|fastify|express|node|bare-born|openapi-backend|express-openapi-validator] [--scenario N] [--slices N] [--slice S] [--connections N] [--pets N]
 *
 * Whether a contestant's cost per request holds while it serves: the product as production runs it
 * and one other contestant (--contestant, `bare`: the bare express floor), each its own process on
 * one scratch database seeded with --pets animals, both warmed for 10 s, then loaded in turn with one
 * of the bench's scenarios (--scenario, 0: the first page) in --slices slices of --slice seconds
 * each (60 of 1 s), the order flipping every slice, so that the machine's changes of speed fall on
 * both alike. Prints, by quarter of the slices, the requests each has served since it started and
 * its server CPU per request over the quarter, with the CPU ratio product / contestant; and each
 * one's last quarter over its first. A cost that grows with the requests served has no one
 * value: a ratio against it depends on how long the contestant ran before it was measured, which
 * a slower machine (fewer requests in the same seconds) changes.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { scratchServerUrl } from '../lib/database';
import { type ServerProcess, positiveIntegerOption, runToEnd, startServerProcess } from '../lib/processes';
import { runTool } from '../lib/tool';
import { type Measurement, SCENARIOS, f2, measure, seededBenchDatabase } from './measure';

const CONTESTANTS = ['bare', 'fastify', 'express', 'node', 'bare-born', 'openapi-backend', 'express-openapi-validator'] as const;
type Side = 'product' | 'contestant';

/** The slices of one quarter, summed: requests answered and server CPU per request over them. */
function quarterOf(slices: readonly Measurement[]): { answered: number; cpuUs: number } {
  const answered = slices.reduce((n, s) => n + s.answered, 0);
  const cpu = slices.reduce((n, s) => n + s.cpuUs * s.answered, 0);
  return { answered, cpuUs: cpu / Math.max(1, answered) };
}

async function main(argv: string[]): Promise<number> {
  const adminUrl = scratchServerUrl('bench:drift');
  if (!adminUrl) return 2;
  const asked = argv.includes('--contestant') ? argv[argv.indexOf('--contestant') + 1] : 'bare';
  const contestant = CONTESTANTS.find((c) => c === asked);
  if (!contestant) {
    process.stderr.write(`bench:drift: --contestant is one of ${CONTESTANTS.join(', ')}\n`);
    return 2;
  }
  const asking = argv.includes('--scenario') ? Number(argv[argv.indexOf('--scenario') + 1]) : 0;
  const scenario = Number.isInteger(asking) ? SCENARIOS[asking] : undefined;
  const slices = Math.max(4, positiveIntegerOption(argv, 'slices', 60));
  const load = {
    duration: positiveIntegerOption(argv, 'slice', 1),
    connections: positiveIntegerOption(argv, 'connections', 50),
    pets: positiveIntegerOption(argv, 'pets', 100_000),
  };
  if (!scenario) {
    process.stderr.write(`bench:drift: --scenario is 0 to ${SCENARIOS.length - 1}\n`);
    return 2;
  }
  await runToEnd(['npm', 'run', '-s', 'build']);
  await runToEnd([process.execPath, require.resolve('typescript/bin/tsc'), '-p', 'scripts/bench/tsconfig.build.json']);
  const { db, key, env } = await seededBenchDatabase(adminUrl, 'animal_store_drift', load.pets);
  const dir = mkdtempSync(path.join(tmpdir(), 'animal-store-drift-'));
  const servers: Partial<Record<Side, ServerProcess>> = {};
  try {
    servers.product = await startServerProcess([process.execPath, 'dist/src/main.js'], env, { logFile: path.join(dir, 'product.log') });
    servers.contestant = await startServerProcess([process.execPath, 'dist/scripts/bench/serve.js', contestant], env, {
      logFile: path.join(dir, 'contestant.log'),
    });
    const sides: Side[] = ['product', 'contestant'];
    const runs: Record<Side, Measurement[]> = { product: [], contestant: [] };
    const run = async (side: Side, duration: number) => {
      const m = await measure(servers[side] as ServerProcess, scenario, key, { ...load, duration });
      if (m.errors > 0 || m.unexpected > 0)
        throw new Error(`${side}: ${m.errors} errors, ${m.unexpected} answers other than ${scenario.expected}`);
      return m;
    };
    // What each served while it warmed: where the first quarter's count of requests served before starts.
    const before: Record<Side, number> = {
      product: (await run('product', 10)).answered,
      contestant: (await run('contestant', 10)).answered,
    };
    for (let i = 0; i < slices; i++)
      for (const side of i % 2 ? [...sides].reverse() : sides) runs[side].push(await run(side, load.duration));

    const name = contestant === 'bare' ? 'bare express floor' : contestant;
    const out = (line: string) => process.stdout.write(`${line}\n`);
    out(
      `# ${scenario.name}: the product beside ${name}, ${slices} alternating slices of ${load.duration} s, ${load.connections} connections`,
    );
    out('');
    out(`| quarter | product: served before | product CPU µs/request | ${name}: served before | ${name} CPU µs/request | CPU ratio |`);
    out('|---|---|---|---|---|---|');
    const quarter = Math.floor(slices / 4);
    const firstAndLast: Record<Side, number[]> = { product: [], contestant: [] };
    for (let q = 0; q < 4; q++) {
      const end = q === 3 ? slices : (q + 1) * quarter;
      const p = quarterOf(runs.product.slice(q * quarter, end));
      const c = quarterOf(runs.contestant.slice(q * quarter, end));
      out(
        `| ${q + 1} | ${before.product.toLocaleString('en')} | ${p.cpuUs.toFixed(0)} | ${before.contestant.toLocaleString('en')} | ${c.cpuUs.toFixed(0)} | ${f2(p.cpuUs / c.cpuUs)} |`,
      );
      before.product += p.answered;
      before.contestant += c.answered;
      if (q === 0 || q === 3) {
        firstAndLast.product.push(p.cpuUs);
        firstAndLast.contestant.push(c.cpuUs);
      }
    }
    const growth = (side: Side) => (firstAndLast[side][1] as number) / (firstAndLast[side][0] as number);
    out('');
    out(`Last quarter over first, CPU per request: the product ${f2(growth('product'))}, ${name} ${f2(growth('contestant'))}.`);
    return 0;
  } finally {
    await Promise.all(Object.values(servers).map((s) => s?.stop()));
    rmSync(dir, { recursive: true, force: true });
    await db.drop();
  }
}

runTool('bench:drift failed', () => main(process.argv.slice(2)), { stack: true });
