/**
 * npm run load [-- --duration SECONDS] [--connections N]
 *
 * A bounded load check: builds and starts the product as production runs it (on a database
 * of its own on DATABASE_URL, dropped afterwards, or on the embedded PostgreSQL), then loads
 * it over loopback with autocannon — a mix of listPets, listPets by status, listPets' next
 * pages (followed from the Link headers it received) and pages asked for with a cursor altered
 * (400), getPet and createPet — and checks every response against the spec, as the server does too
 * (VALIDATE_RESPONSES=enforce). Exits 1 unless there were zero
 * errors, zero 5xx, zero unexpected statuses and zero contract violations.
 *
 * LOAD_DATABASE_URL: use this database as it is (no database of its own is made), such as one
 * behind a pooler, which serves only the databases it is configured with; DATABASE_POOL_MODE
 * and the other settings in the environment reach the server as they are.
 */
import { randomBytes } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import { ContractChecker } from '../../src/contract/contractChecker';
import { UNREACHABLE_RATE_LIMIT, positiveIntegerOption, runToEnd, scratchDatabase, startProduct } from '../lib/processes';
import { runTool } from '../lib/tool';

/** Where the server keeps its data: LOAD_DATABASE_URL as it is, a database of its own on DATABASE_URL, or an embedded one in a scratch folder. */
async function loadDatabase() {
  const given = process.env.LOAD_DATABASE_URL;
  const scratch = given
    ? { url: given, drop: async () => {} }
    : process.env.DATABASE_URL
      ? await scratchDatabase(process.env.DATABASE_URL, 'animal_store_load')
      : undefined;
  const pgliteDir = scratch ? undefined : mkdtempSync(path.join(tmpdir(), 'animal-store-load-'));
  const where = given
    ? `${new URL(given).host}${new URL(given).pathname}${process.env.DATABASE_POOL_MODE === 'transaction' ? ' (DATABASE_POOL_MODE=transaction)' : ''}`
    : scratch
      ? `a database of its own on ${new URL(process.env.DATABASE_URL as string).host}`
      : 'the embedded PostgreSQL';
  return {
    url: scratch?.url,
    pgliteDir,
    where,
    async drop() {
      await scratch?.drop();
      if (pgliteDir) rmSync(pgliteDir, { recursive: true, force: true });
    },
  };
}

/** Some animals to read, made through the API: their ids. */
async function seedAnimals(origin: string, auth: Record<string, string>): Promise<number[]> {
  const ids: number[] = [];
  for (let i = 0; i < 200; i++) {
    const res = await fetch(`${origin}/v1/pets`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ name: `Load ${i}`, categoryId: i, status: ['available', 'pending', 'sold'][i % 3] }),
    });
    if (res.status !== 201) throw new Error(`seeding got ${res.status}: ${await res.text()}`);
    ids.push(((await res.json()) as { id: number }).id);
  }
  return ids;
}

/** Each connection's context remembers the path of its request in flight. */
type Context = { path?: string };
const remember = (path: string, ctx: object) => ((ctx as Context).path = path);

/** The count of every answer by operation and status, and of those the spec or the expected status refuse. */
function createTally(checker: ContractChecker) {
  const tally = { statuses: new Map<string, number>(), violations: [] as string[], violationCount: 0, unexpected: 0 };
  const expectStatus =
    (method: string, expected: number) => (status: number, body: string, context: object, headers: IncomingHttpHeaders | undefined) => {
      const url = (context as Context).path ?? '?';
      const label = `${method} ${url.replace(/\/\d+$/, '/{petId}').replace(/\?.*/, '')}${url.includes('cursor=') ? ' (cursor)' : ''} ${status}`;
      tally.statuses.set(label, (tally.statuses.get(label) ?? 0) + 1);
      if (status !== expected) tally.unexpected++;
      try {
        const lower = Object.fromEntries(Object.entries(headers ?? {}).map(([k, v]) => [k.toLowerCase(), v]));
        checker.check(method, url, { status, body: body ? JSON.parse(body) : undefined, headers: lower });
      } catch (err) {
        tally.violationCount++;
        if (tally.violations.length < 5) tally.violations.push((err as Error).message.split('\n')[0] ?? '');
      }
    };
  return { tally, expectStatus };
}

/**
 * The mix: first pages, the next pages they named (Link rel="next", the latest few), a cursor
 * altered (400), a page by status, getPet and createPet.
 */
function loadRequests(ids: number[], expectStatus: ReturnType<typeof createTally>['expectStatus']): autocannon.Request[] {
  let n = 0;
  const nextPages: string[] = [];
  const firstPage = expectStatus('get', 200);
  const pick = () => nextPages[Math.floor(Math.random() * nextPages.length)] ?? '/v1/pets?limit=20';
  const at = (path: () => string) => (r: autocannon.Request, ctx: object) => {
    const p = path();
    remember(p, ctx);
    return { ...r, path: p };
  };
  return [
    {
      method: 'GET',
      path: '/v1/pets?limit=20',
      setupRequest: (r, ctx) => (remember(r.path ?? '', ctx), r),
      onResponse: (status, body, context, headers) => {
        const link = Object.entries(headers ?? {}).find(([name]) => name.toLowerCase() === 'link')?.[1];
        const next = /^<([^>]+)>; rel="next"$/.exec(String(link ?? ''))?.[1];
        if (next !== undefined && nextPages.push(next) > 50) nextPages.shift();
        firstPage(status, body, context, headers);
      },
    },
    { method: 'GET', setupRequest: at(pick), onResponse: expectStatus('get', 200) },
    {
      method: 'GET',
      // A cursor with one character changed: never issued, so 400.
      setupRequest: at(() => {
        const p = pick().replace(/cursor=([A-Za-z0-9_-])/, (_, c: string) => `cursor=${c === 'A' ? 'B' : 'A'}`);
        return p.includes('cursor=') ? p : '/v1/pets?cursor=A';
      }),
      onResponse: expectStatus('get', 400),
    },
    {
      method: 'GET',
      path: '/v1/pets?status=available&limit=100',
      setupRequest: (r, ctx) => (remember(r.path ?? '', ctx), r),
      onResponse: expectStatus('get', 200),
    },
    {
      method: 'GET',
      setupRequest: at(() => `/v1/pets/${ids[Math.floor(Math.random() * ids.length)]}`),
      onResponse: expectStatus('get', 200),
    },
    {
      method: 'POST',
      path: '/v1/pets',
      headers: { 'content-type': 'application/json' },
      setupRequest: (r, ctx) => {
        remember('/v1/pets', ctx);
        n += 1;
        return { ...r, body: JSON.stringify({ name: `Loaded ${n}`, categoryId: n }) };
      },
      onResponse: expectStatus('post', 201),
    },
  ];
}

/** Prints the results; returns how many problems they hold. */
function report(result: autocannon.Result, tally: ReturnType<typeof createTally>['tally']): number {
  const fivexx = result['5xx'];
  const line = (label: string, value: string | number) => process.stdout.write(`  ${label.padEnd(26)} ${value}\n`);
  process.stdout.write('load: results\n');
  line('requests', `${result.requests.total} (${Math.round(result.requests.average)} req/s)`);
  line('latency p50 / p99', `${result.latency.p50} ms / ${result.latency.p99} ms`);
  line('errors / timeouts', `${result.errors} / ${result.timeouts}`);
  line('5xx', fivexx);
  line('unexpected statuses', tally.unexpected);
  line('contract violations', tally.violationCount);
  for (const [label, count] of [...tally.statuses].sort()) line(`  ${label}`, count);
  for (const v of tally.violations) process.stdout.write(`  violation: ${v}\n`);
  return result.errors + result.timeouts + fivexx + tally.unexpected + tally.violationCount + (result.requests.total === 0 ? 1 : 0);
}

async function main(argv: string[]): Promise<number> {
  const duration = positiveIntegerOption(argv, 'duration', 10);
  const connections = positiveIntegerOption(argv, 'connections', 50);
  const key = randomBytes(24).toString('base64url');
  const auth = { authorization: `Bearer ${key}` };

  process.stdout.write('load: building…\n');
  await runToEnd(['npm', 'run', '-s', 'build']);
  const db = await loadDatabase();
  // The rate limiter runs as in production, with a limit this load cannot reach; every reply is checked
  // against the spec in the server too (a violation there is a 500, which fails the run).
  const server = await startProduct({
    DATABASE_URL: db.url,
    PGLITE_DATA_DIR: db.pgliteDir,
    API_KEYS: key,
    RATE_LIMIT: UNREACHABLE_RATE_LIMIT,
    VALIDATE_RESPONSES: 'enforce',
  });
  let failures = 0;
  try {
    const origin = new URL(server.baseUrl).origin;
    process.stdout.write(`load: ${connections} connections for ${duration} s against ${server.baseUrl} on ${db.where}\n`);
    const ids = await seedAnimals(origin, auth);
    const { tally, expectStatus } = createTally(await ContractChecker.create());
    const result = await autocannon({ url: origin, connections, duration, headers: auth, requests: loadRequests(ids, expectStatus) });
    failures = report(result, tally);
  } finally {
    const code = await server.stop();
    if (code !== 0) {
      process.stdout.write(`load: the server exited ${code} on SIGTERM\n${server.output().slice(-2000)}\n`);
      failures++;
    }
    await db.drop();
  }
  process.stdout.write(
    failures === 0
      ? 'load: passed (zero errors, zero 5xx, zero unexpected statuses, zero contract violations)\n'
      : `load: FAILED (${failures} problems)\n`,
  );
  return failures === 0 ? 0 : 1;
}

runTool('load failed', () => main(process.argv.slice(2)), { stack: true });
