/**
 * npm run soak [-- --minutes N] [--clients N] [--fault-every SECONDS]
 *
 * The service as production runs it, for N minutes (default 60) under a mixed load while faults come
 * one after another: two instances (WEB_CONCURRENCY=2) behind PgBouncer in transaction mode (one in
 * front of each node) on a pg_auto_failover pair. Needs pg_auto_failover and PgBouncer (Debian's
 * packages) and root or the postgres user, as the system tests that use them. Exits 1 unless there
 * were 0 acknowledged creates lost, 0 refused creates stored, 0 wrong answers (5xx other than 503
 * included), every instance serving again after each fault, every storm's silent connections closed
 * by the server, and (runs of 20 minutes or more) the RSS each process keeps after a full collection growing
 * under 10% over the second half. docs/operations.md, "The soak", says what each check means.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { connect } from '../../src/store/database/db';
import { migrate } from '../../src/store/database/migrate';
import { autoFailoverUnavailable, createAutoFailover } from '../lib/autoFailover';
import { type PgBouncer, pgbouncerUnavailable, startPgBouncer } from '../lib/pgbouncer';
import { UNREACHABLE_RATE_LIMIT, positiveIntegerOption, runToEnd } from '../lib/processes';
import { runTool } from '../lib/tool';
import { FAULTS, type Stage, inject } from './faults';
import {
  type Instance,
  eventLoopP99Ms,
  keptReading,
  recordHeap,
  recordRss,
  rssMiB,
  serving,
  soakNodeOptions,
  startInstance,
} from './instances';
import { startKeyChurn } from './keys';
import { type Fault, loggedLines, report, type Sample } from './report';
import { startTraffic } from './traffic';

/** How long an instance may take to serve again after a fault before the run counts it as not recovered. */
const RECOVERY_MS = 120_000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Each process's RSS, then (one process at a time) what it keeps after a full collection, and each instance's
 * event-loop delay, now, said as they are taken.
 */
async function takeSample(
  label: string,
  o: { instances: Instance[]; metricsToken: string; reports: string; say: (line: string) => void },
): Promise<Sample> {
  const processes: Sample['processes'] = [];
  for (const i of o.instances)
    for (const pid of i.pids()) processes.push({ instance: i.name, pid, rssMiB: rssMiB(pid), kept: await keptReading(pid, o.reports) });
  const delays = await Promise.all(o.instances.map((i) => eventLoopP99Ms(i.origin, o.metricsToken)));
  const kept = (p: Sample['processes'][number]) => (p.kept ? `, ${p.kept.rssMiB} kept` : '');
  o.say(
    `sample ${label}: RSS MiB ${processes.map((p) => `${p.pid} ${p.rssMiB}${kept(p)}`).join(', ')}; event loop p99 ${delays.join(', ')} ms`,
  );
  return { label, at: new Date().toISOString(), processes, eventLoopP99Ms: delays };
}

/**
 * The faults, one every `faultEveryMs` until `end`, each followed by the wait until every instance serves again;
 * the middle sample is taken when the run's second half begins.
 */
async function runSchedule(
  stage: Stage,
  o: {
    bootstrapKey: string;
    faultEveryMs: number;
    started: number;
    end: number;
    sample: (label: string) => Promise<void>;
    say: (line: string) => void;
  },
): Promise<Fault[]> {
  let middleTaken = false;
  const faults: Fault[] = [];
  for (let n = 0; Date.now() + o.faultEveryMs < o.end; n++) {
    await sleep(o.faultEveryMs);
    if (!middleTaken && Date.now() >= o.started + (o.end - o.started) / 2) {
      await o.sample('middle');
      middleTaken = true;
    }
    // When it began (UTC), to be found in the instances', PgBouncers' and nodes' logs.
    const at = new Date().toISOString().slice(11, 19);
    const { what, silentHeld } = await inject(FAULTS[n % FAULTS.length] as (typeof FAULTS)[number], stage);
    const recoveredMs = await Promise.all(stage.instances.map((i) => serving(i, o.bootstrapKey, RECOVERY_MS)));
    faults.push({ at, what, silentHeld, recoveredMs });
    o.say(`${at} ${what}; serving again after ${recoveredMs.map((ms) => (ms === undefined ? 'NEVER' : `${ms} ms`)).join(', ')}`);
  }
  if (!middleTaken) await o.sample('middle');
  return faults;
}

/**
 * The instances' environment, as production's: cluster mode, the poolers' addresses with target_session_attrs, every
 * feature on (the rate limiter with a limit the load never reaches), and each process writing its diagnostic report
 * into `reports` on SIGUSR2 (the heap readings beside the RSS ones).
 */
function productionEnv(bouncers: PgBouncer[], o: { bootstrapKey: string; metricsToken: string; reports: string }): NodeJS.ProcessEnv {
  mkdirSync(o.reports);
  return {
    NODE_ENV: 'production',
    DATABASE_URL: `postgres://postgres@${bouncers.map((b) => `127.0.0.1:${b.port}`).join(',')}/postgres?target_session_attrs=primary`,
    DATABASE_POOL_MODE: 'transaction',
    WEB_CONCURRENCY: '2',
    API_KEYS: o.bootstrapKey,
    METRICS_TOKEN: o.metricsToken,
    MCP_ENABLED: 'true',
    RATE_LIMIT: UNREACHABLE_RATE_LIMIT,
    LOG_LEVEL: 'info',
    NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} ${soakNodeOptions(o.reports)}`.trim(),
  };
}

async function main(argv: string[]): Promise<number> {
  const minutes = positiveIntegerOption(argv, 'minutes', 60);
  const clients = positiveIntegerOption(argv, 'clients', 12);
  const faultEveryMs = positiveIntegerOption(argv, 'fault-every', 60) * 1000;
  const missing = autoFailoverUnavailable() ?? pgbouncerUnavailable();
  if (missing) throw new Error(missing);
  const runId = randomBytes(3).toString('hex');
  const dir = mkdtempSync(path.join(tmpdir(), 'animal-store-soak-'));
  const say = (line: string) => process.stdout.write(`soak: ${line}\n`);

  say('building…');
  await runToEnd(['npm', 'run', '-s', 'build']);
  say('a pg_auto_failover pair (monitor, primary, synchronous secondary)…');
  const cluster = await createAutoFailover();
  const bouncers: PgBouncer[] = [];
  const instances: Instance[] = [];
  // The operator's connection, straight to the primary (as `npm run keys` would be): the schema, and the final count.
  // The key churn opens its own (and a new one when a command on it passes its deadline).
  const admin = connect(cluster.url, { max: 2 });
  let cleaned: Promise<void> | undefined;
  /** Everything the run started, stopped: once, at its end or on Ctrl-C (SIGINT) or SIGTERM. */
  const cleanUp = () =>
    (cleaned ??= (async () => {
      for (const instance of instances) await instance.stop().catch(() => undefined);
      for (const bouncer of bouncers) await bouncer.stop().catch(() => undefined);
      await admin.end({ timeout: 1 });
      await cluster.destroy();
    })());
  const interrupted = () => void cleanUp().finally(() => process.exit(130));
  process.once('SIGINT', interrupted).once('SIGTERM', interrupted);
  try {
    await migrate(admin);
    // server_login_retry as docs/operations.md advises in front of a failover pair: one login refused while a server
    // restarts (shutting down, starting up) otherwise refuses every new server connection for 15 s.
    for (const node of cluster.nodes) bouncers.push(await startPgBouncer(node.port, 'transaction', 10, { server_login_retry: 1 }));
    const bootstrapKey = randomBytes(24).toString('base64url');
    const reports = path.join(dir, 'reports');
    const metricsToken = randomBytes(24).toString('base64url');
    const env = productionEnv(bouncers, { bootstrapKey, metricsToken, reports });
    for (const name of ['instance 1', 'instance 2'])
      instances.push(await startInstance(name, env, path.join(dir, `${name.replace(' ', '-')}.log`)));
    say(`${instances.map((i) => `${i.name} at ${i.origin}`).join(', ')}; logs in ${dir}`);

    const traffic = startTraffic(() => instances.map((i) => i.origin), bootstrapKey, clients, runId);
    const churn = startKeyChurn(
      () => connect(cluster.url, { max: 1 }),
      () => instances,
      traffic,
      runId,
      5_000,
    );
    const samples: Sample[] = [];
    const rss = recordRss(() => instances, 10_000);
    const heap = recordHeap(() => instances, 60_000, reports);
    const sample = async (label: string) => void samples.push(await takeSample(label, { instances, metricsToken, reports, say }));

    const started = Date.now();
    const end = started + minutes * 60_000;
    await sleep(Math.min(30_000, faultEveryMs / 2));
    await sample('start');
    const faults = await runSchedule({ cluster, bouncers, instances }, { bootstrapKey, faultEveryMs, started, end, sample, say });
    while (Date.now() < end) await sleep(1_000);
    await sample('end');
    say('stopping the key churn and the load, and waiting for the cluster to settle…');
    rss.stop();
    heap.stop();
    await churn.stop();
    await traffic.stop();
    await cluster.settled();

    const status = await report({
      minutes,
      traffic,
      churn,
      faults,
      samples,
      rssSeries: rss.series,
      heapSeries: heap.series,
      sql: admin,
      say,
    });
    // The instances' logs are kept when a check failed (they say what each answered), and go when none did.
    if (status === 0) rmSync(dir, { recursive: true, force: true });
    else {
      const requestIds = traffic.ledger.wrong.flatMap((w) => w.requestId ?? []);
      for (const line of await loggedLines(dir, requestIds)) say(`  logged: ${line}`);
      say(`the instances' logs are in ${dir}`);
    }
    return status;
  } finally {
    await cleanUp();
  }
}

runTool('soak', () => main(process.argv.slice(2)), { stack: true });
