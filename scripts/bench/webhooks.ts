/**
 * The bench's webhooks (docs/webhooks.md), on a database and a server of their own, delivering to
 * a receiver on loopback (WEBHOOK_ALLOW_PRIVATE_TARGETS=true) that answers 204 as a receiver does:
 *
 * - a create's req/s and latency, and its server CPU at one steady rate, with one endpoint
 *   subscribed (its event and delivery written by the create's own statement) beside none (the
 *   endpoint disabled), in interleaved rounds. While the
 *   rounds run the receiver holds each delivery (answered 8 s later, within the attempt's 10 s),
 *   so the worker's sixteen attempts in flight wait and the rounds measure the create, not the sending;
 * - the deliveries per second one instance sustains: the backlog those rounds left, drained by
 *   its worker once the receiver answers at once, with the server's CPU per delivery;
 * - the lag from an event's creation (its `createdAt`) to the receiver holding it, p50 and p99,
 *   at a steady create load (`--webhook-rate`, creates per second);
 * - and throughout: every event delivered, the duplicates counted (0 expected: nothing fails).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import autocannon from 'autocannon';
import { type Sql, connect } from '../../src/store/database/db';
import { migrate } from '../../src/store/database/migrate';
import { setEndpointEnabled } from '../../src/store/webhooks/admin';
import { type ServerProcess, UNREACHABLE_RATE_LIMIT, scratchDatabase, startProduct } from '../lib/processes';
import type { Depth, LogFile } from './deep';
import { type Measurement, SCENARIOS, type Scenario, auth, cpuMicros, f2, measure, median } from './measure';

/** What the section found, for the bench's targets. */
export interface WebhookFigures {
  /** Server CPU per create, one endpoint subscribed / none. */
  cpuRatio: number;
  /** Events not delivered, and deliveries received more than once. */
  lost: number;
  duplicates: number;
  /** Every create run answered as expected, without errors. */
  clean: boolean;
}

export interface WebhookLoad extends Depth {
  /** Creates per second of the lag's steady load. */
  webhookRate: number;
}

type State = 'none' | 'subscribed';
/** Creates per second of the CPU rounds: one rate for both, below what either sustains here. */
const CPU_RATE = 600;

/** How long the receiver holds a delivery while the create rounds run: within the attempt's 10 s timeout. */
const HOLD_MS = 8_000;

/** A receiver that answers 204, counts each event's deliveries and, while `recording`, each one's lag. */
async function startBenchReceiver() {
  const seen = new Map<string, number>();
  const lags: number[] = [];
  const held = new Set<() => void>();
  let holding = true;
  let recording = false;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const at = Date.now();
      const id = String(req.headers['webhook-id']);
      seen.set(id, (seen.get(id) ?? 0) + 1);
      if (recording) lags.push(at - Date.parse((JSON.parse(Buffer.concat(chunks).toString('utf8')) as { createdAt: string }).createdAt));
      const answer = () => {
        held.delete(answer);
        clearTimeout(timer);
        res.writeHead(204).end();
      };
      const timer = setTimeout(answer, holding ? HOLD_MS : 0);
      if (holding) held.add(answer);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
    seen,
    lags,
    /** From now on, answer at once; those held are answered now. */
    release() {
      holding = false;
      for (const answer of [...held]) answer();
    },
    record: (on: boolean) => void (recording = on),
    close: () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))),
  };
}

const percentile = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((xs.length * p) / 100))] ?? NaN;

/**
 * Creates, subscribed and not, interleaved (the order flips each round), after a warm-up round: as
 * fast as they go (req/s, latency), and at one steady rate (the CPU a create costs, not what a
 * lower throughput adds to each request's share of the process's fixed costs).
 */
async function createRounds(
  server: ServerProcess,
  create: Scenario,
  { sql, id, key, o }: { sql: Sql; id: string; key: string; o: WebhookLoad },
): Promise<{ runs: Record<State, Measurement[]>; steadyRuns: Record<State, Measurement[]> }> {
  const runs: Record<State, Measurement[]> = { none: [], subscribed: [] };
  const steadyRuns: Record<State, Measurement[]> = { none: [], subscribed: [] };
  const atRate = { ...create, request: (k: string, pets: number) => ({ ...create.request(k, pets), overallRate: CPU_RATE }) };
  for (let round = o.smoke ? 1 : 0; round <= o.rounds; round++)
    for (const state of round % 2 ? (['subscribed', 'none'] as const) : (['none', 'subscribed'] as const)) {
      await setEndpointEnabled(sql, id, state === 'subscribed');
      const m = await measure(server, create, key, o);
      const steadyM = await measure(server, atRate, key, o);
      if (round === 0) continue;
      runs[state].push(m);
      steadyRuns[state].push(steadyM);
    }
  await setEndpointEnabled(sql, id, true);
  return { runs, steadyRuns };
}

/** The section as the bench prints it. */
function report(
  out: (line: string) => void,
  o: WebhookLoad,
  f: {
    runs: Record<State, Measurement[]>;
    cpu: (state: State) => number;
    cpuRatio: number;
    backlog: number;
    drainS: number;
    cpuPerDelivery: number;
    lag: { p50: number; p99: number; creates: number };
    events: number;
    lost: number;
    duplicates: number;
  },
): void {
  out('\n## Webhooks: the outbox, the worker and the lag\n');
  out(
    `One instance on a database of its own, delivering to a receiver on loopback that answers 204. Creates with one endpoint subscribed beside none (the endpoint disabled), ${o.rounds} interleaved round(s), ${o.connections} connections; the receiver holds each delivery meanwhile, so the rounds measure the create and not the sending.\n`,
  );
  out(`| creates | req/s (median) | p50 ms | p99 ms | server CPU µs/request at ${CPU_RATE}/s |`);
  out('|---|---|---|---|---|');
  for (const state of ['none', 'subscribed'] as const) {
    const ms = f.runs[state];
    out(
      `| ${state === 'none' ? 'no endpoint subscribed' : 'one endpoint subscribed'} | ${Math.round(median(ms.map((m) => m.rps)))} | ${median(ms.map((m) => m.p50))} | ${median(ms.map((m) => m.p99))} | ${Math.round(f.cpu(state))} |`,
    );
  }
  out(`\nserver CPU per create, subscribed / none: ${f2(f.cpuRatio)} (target ≤ 1.10: ${f.cpuRatio <= 1.1 ? 'met' : 'NOT met'})`);
  out(
    `\nDeliveries one instance sustains (its worker, sixteen attempts at a time): ${f.backlog.toLocaleString('en')} waiting, drained in ${f.drainS.toFixed(1)} s: **${Math.round(f.backlog / f.drainS)} deliveries/s**, ${Math.round(f.cpuPerDelivery)} µs of server CPU each.`,
  );
  out(
    `\nLag from an event's creation to its receiver, at a steady ${o.webhookRate} creates/s (${f.lag.creates} creates): p50 ${Math.round(f.lag.p50)} ms, p99 ${Math.round(f.lag.p99)} ms.`,
  );
  out(`\nEvents ${f.events.toLocaleString('en')}: not delivered ${f.lost}, delivered more than once ${f.duplicates}.`);
}

export async function webhookDeliveries(
  adminUrl: string,
  key: string,
  o: WebhookLoad,
  out: (line: string) => void,
  logFile: LogFile,
): Promise<WebhookFigures> {
  const create = SCENARIOS.find((s) => s.name === 'POST /v1/pets (valid)');
  if (!create) throw new Error('the create scenario is missing');
  const db = await scratchDatabase(adminUrl, 'animal_store_bench_webhooks');
  const sql = connect(db.url, { max: 1 });
  const receiver = await startBenchReceiver();
  await migrate(sql);
  const server = await startProduct(
    { DATABASE_URL: db.url, API_KEYS: key, RATE_LIMIT: UNREACHABLE_RATE_LIMIT, WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true', LOG_LEVEL: 'info' },
    logFile('webhooks'),
  );
  const pending = async () =>
    (await sql<{ n: number }[]>`SELECT count(*)::int AS n FROM webhook_deliveries WHERE state = 'pending'`)[0]?.n ?? 0;
  const drained = async (withinMs: number) => {
    for (const until = Date.now() + withinMs; (await pending()) > 0; await new Promise((r) => setTimeout(r, 50)))
      if (Date.now() > until) throw new Error(`webhook deliveries not drained within ${withinMs / 1000} s:\n${server.output()}`);
  };
  try {
    const made = await fetch(`${server.baseUrl}/webhook-endpoints`, {
      method: 'POST',
      headers: { ...auth(key), 'content-type': 'application/json' },
      body: JSON.stringify({ url: receiver.url, events: ['pet.created'], description: 'bench' }),
    });
    if (made.status !== 201) throw new Error(`subscribing answered ${made.status}: ${await made.text()}`);
    const { id } = (await made.json()) as { id: string };

    const { runs, steadyRuns } = await createRounds(server, create, { sql, id, key, o });
    const cpu = (state: State) => median(steadyRuns[state].map((m) => m.cpuUs));
    const cpuRatio = cpu('subscribed') / cpu('none');

    // 2. The backlog the subscribed rounds left, drained by one instance's worker.
    const backlog = await pending();
    const cpuBefore = cpuMicros(server.child.pid as number);
    const started = performance.now();
    receiver.release();
    await drained(600_000);
    const drainS = (performance.now() - started) / 1000;
    const cpuPerDelivery = (cpuMicros(server.child.pid as number) - cpuBefore) / Math.max(1, backlog);

    // 3. The lag at a steady create load.
    receiver.record(true);
    const steady = await autocannon({
      url: `${new URL(server.baseUrl).origin}/v1/pets`,
      ...create.request(key, 0),
      connections: 10,
      overallRate: o.webhookRate,
      duration: o.smoke ? 2 : 3 * o.duration,
    });
    // A create autocannon left in flight at the end may still commit: let it, then drain.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    await drained(60_000);
    receiver.record(false);

    const events = new Set((await sql<{ id: string }[]>`SELECT id FROM webhook_events`).map((e) => e.id));
    const lost = [...events].filter((e) => !receiver.seen.has(e)).length;
    const unknown = [...receiver.seen.keys()].filter((e) => !events.has(e)).length;
    if (unknown > 0) throw new Error(`the receiver was sent ${unknown} event(s) the database does not hold`);
    const duplicates = [...receiver.seen.values()].reduce((n, times) => n + times - 1, 0);
    const clean =
      [...Object.values(runs), ...Object.values(steadyRuns)].flat().every((m) => m.errors === 0 && m.unexpected === 0) &&
      steady.errors + steady.non2xx === 0;

    const lag = { p50: percentile(receiver.lags, 50), p99: percentile(receiver.lags, 99), creates: steady.requests.total };
    report(out, o, { runs, cpu, cpuRatio, backlog, drainS, cpuPerDelivery, lag, events: events.size, lost, duplicates });
    return { cpuRatio, lost, duplicates, clean };
  } finally {
    await server.stop();
    await receiver.close();
    await sql.end();
    await db.drop();
  }
}
