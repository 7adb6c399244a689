/**
 * npm run bench:ab -- --against DIR [--rounds N] [--duration S] [--warmup S] [--connections N] [--pets N]
 *
 * The product of this tree beside the product built in another checkout (DIR, for example a git
 * worktree of the commit before a change, built with `npm install && npm run build` there), both
 * as production runs them, each on a database of its own seeded alike with --pets animals, every
 * scenario of the bench (list 20, list by status, get, create, 400, 401) in rounds: both sides
 * are started afresh for each round and warmed on every scenario (`warmUp`, runs of --warmup, 1 s), then each
 * scenario runs on each side in turn, each measured run right after runs of --warmup on the same side until its
 * CPU per request holds (`measureWarm`; the order flips each round and scenario). Prints, per
 * scenario, each side's median req/s and server CPU per request, and the CPU ratio this / DIR per
 * round with its median and range: what a change to the request path costs, measured in one run
 * on one machine.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { connect } from '../../src/store/database/db';
import { seedSampleAnimals } from '../db/sampleAnimals';
import { scratchServerUrl } from '../lib/database';
import {
  type ServerProcess,
  UNREACHABLE_RATE_LIMIT,
  positiveIntegerOption,
  runToEnd,
  scratchDatabase,
  startProduct,
  startServerProcess,
} from '../lib/processes';
import { runTool } from '../lib/tool';
import { type Measurement, SCENARIOS, f2, measureWarm, median, warmUp } from './measure';

/** Resolves once `server` answers /readyz with 200 (migrated, keys read), or fails after a minute. */
async function ready(server: ServerProcess): Promise<void> {
  const url = new URL('/readyz', server.baseUrl);
  const end = Date.now() + 60_000;
  for (;;) {
    const status = await fetch(url).then(
      (r) => r.status,
      () => 0,
    );
    if (status === 200) return;
    if (Date.now() > end) throw new Error(`${url.href} answered ${status} for a minute: not ready`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function main(argv: string[]): Promise<number> {
  const at = argv.indexOf('--against');
  const against = at < 0 ? undefined : path.resolve(argv[at + 1] ?? '');
  if (!against || !existsSync(path.join(against, 'dist', 'src', 'main.js'))) {
    process.stderr.write('bench:ab: --against DIR names a checkout whose product is built (DIR/dist/src/main.js)\n');
    return 2;
  }
  const adminUrl = scratchServerUrl('bench:ab');
  if (!adminUrl) return 2;
  const num = (name: string, fallback: number) => positiveIntegerOption(argv, name, fallback);
  const o = {
    rounds: num('rounds', 5),
    duration: num('duration', 5),
    warmup: num('warmup', 1),
    connections: num('connections', 50),
    pets: num('pets', 100_000),
  };
  process.stdout.write('bench:ab: building this tree…\n');
  await runToEnd(['npm', 'run', '-s', 'build']);
  // Each side on a database of its own, seeded alike: the other's schema is what its own start-up
  // migrates (a tree with a newer migration would leave it a database it refuses).
  const dbs = [await scratchDatabase(adminUrl, 'animal_store_ab'), await scratchDatabase(adminUrl, 'animal_store_ab')];
  const key = randomBytes(24).toString('base64url');
  let servers: ServerProcess[] = [];
  const logs = mkdtempSync(path.join(tmpdir(), 'animal-store-ab-'));
  try {
    const env = (url: string) => ({
      DATABASE_URL: url,
      API_KEYS: key,
      RATE_LIMIT: UNREACHABLE_RATE_LIMIT,
      LOG_LEVEL: 'info',
      DATABASE_POOL_SIZE: '7',
    });
    const [mine, theirs] = dbs as [(typeof dbs)[0], (typeof dbs)[0]];
    const other = [process.execPath, path.join(against, 'dist', 'src', 'main.js')];
    // Both sides, started afresh; each logs its line per request to a file of its own for the start (a start is
    // read from its file), as in the bench, not through this process.
    let starts = 0;
    const startBoth = async () => {
      starts += 1;
      servers = [
        await startProduct(env(mine.url), { logFile: path.join(logs, `this-${starts}.log`) }),
        await startServerProcess(other, { PORT: '0', ...env(theirs.url) }, { logFile: path.join(logs, `other-${starts}.log`) }),
      ];
      for (const server of servers) await ready(server);
    };
    const stopBoth = async () => {
      const running = servers;
      servers = [];
      await Promise.all(running.map((s) => s.stop()));
    };
    // The first start-up migrates each database; then they are seeded alike.
    await startBoth();
    await stopBoth();
    for (const db of dbs) {
      const sql = connect(db.url, { max: 1 });
      await seedSampleAnimals(sql, o.pets);
      await sql`ANALYZE pets`;
      await sql.end();
    }
    const out = (line: string) => process.stdout.write(`${line}\n`);
    out(`# A/B: this tree against ${against}, ${new Date().toISOString()}`);
    out(
      `\n${o.pets.toLocaleString('en')} animals; ${o.connections} connections; ${o.duration} s per run; ${o.rounds} rounds, both sides started afresh for each and warmed on every scenario until its CPU per request holds.\n`,
    );
    const runs = SCENARIOS.map((): Measurement[][] => [[], []]);
    for (let round = 0; round < o.rounds; round++) {
      await startBoth();
      try {
        // A fresh process spends its first seconds compiling: that is no scenario's cost.
        for (const server of servers) for (const scenario of SCENARIOS) await warmUp(server, scenario, key, o);
        for (const [s, scenario] of SCENARIOS.entries())
          for (const i of (round + s) % 2 ? [1, 0] : [0, 1])
            runs[s]?.[i]?.push(await measureWarm(servers[i] as ServerProcess, scenario, key, o));
      } finally {
        await stopBoth();
      }
      process.stdout.write(`bench:ab: round ${round + 1} of ${o.rounds} done\n`);
    }
    out('| scenario | req/s this | req/s other | CPU µs this | CPU µs other | CPU this/other per round | median (range) |');
    out('|---|---|---|---|---|---|---|');
    for (const [s, scenario] of SCENARIOS.entries()) {
      const [a = [], b = []] = runs[s] ?? [];
      const ratios = a.map((m, r) => m.cpuUs / (b[r]?.cpuUs ?? Number.NaN));
      const faults = [...a, ...b].reduce((n, m) => n + m.errors + m.unexpected, 0);
      out(
        `| ${scenario.name}${faults ? ` (${faults} errors or unexpected statuses)` : ''} | ${Math.round(median(a.map((m) => m.rps)))} | ${Math.round(median(b.map((m) => m.rps)))} | ${Math.round(median(a.map((m) => m.cpuUs)))} | ${Math.round(median(b.map((m) => m.cpuUs)))} | ${ratios.map(f2).join(' ')} | ${f2(median(ratios))} (${f2(Math.min(...ratios))}–${f2(Math.max(...ratios))}) |`,
      );
    }
    return 0;
  } finally {
    await Promise.all(servers.map((s) => s.stop()));
    await Promise.all(dbs.map((db) => db.drop()));
    rmSync(logs, { recursive: true, force: true });
  }
}

runTool('bench:ab failed', () => main(process.argv.slice(2)), { stack: true });
