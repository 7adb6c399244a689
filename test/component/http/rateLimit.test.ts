import { bootstrapClientId } from '../../../src/http/auth';
import { createApp } from '../../../src/app';
import { withStores } from '../../../src/handlers';
import { createStores } from '../../../src/store';
import { MAX_RESERVATION, type RateDecision, type RateLimiter, createRateLimiter } from '../../../src/store/rateLimits';
import {
  API_KEY,
  OTHER_API_KEY,
  type TestApp,
  auth,
  buildNewPet,
  captureLogs,
  contractClient,
  listenOnLoopback,
  startTestApp,
  specOfFile,
  checkerOfFile,
} from '../../support/harness';

// Per-key rate limits, counted in PostgreSQL (RATE_LIMIT), through HTTP. Each test spends keys of
// its own, so that none depends on what another did to a count (they pass alone and in any order),
// and the file's apps share its database: the first is still open as the others start.
const LIMIT = 5;
// Windows start at multiples of their length since the epoch: an hour's would reset at every hour, under a run
// that straddles one. 9999 hours (the longest RATE_LIMIT takes) puts the resets over a year apart.
const WINDOW = 9999 * 3600;
const KEYS = {
  exhausted: API_KEY,
  spent: OTHER_API_KEY,
  fresh: 'fresh-key-0123456789abcdef',
  counted: 'counted-key-0123456789abcdef',
  sharedRefused: 'shared-refused-key-0123456789',
  sharedCounted: 'shared-counted-key-0123456789',
};
let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ bootstrapKeys: Object.values(KEYS), rateLimit: { requests: LIMIT, windowSeconds: WINDOW }, database: 'file' });
});
afterAll(() => t.close());

const parse = (header: string | undefined) =>
  Object.fromEntries(
    (header ?? '')
      .split(';')
      .slice(1)
      .map((p) => p.split('='))
      .map(([k, v]) => [k, Number(v)]),
  );
const spend = async (api: TestApp['api'], key: string, n: number) => {
  for (let i = 0; i < n; i++) await api.get('/v1/pets').set(auth(key)).expect(200);
};

describe('rate limiting per API key', () => {
  test('when a key makes more requests than its limit, then the excess gets 429 with Retry-After and the RateLimit headers', async () => {
    const remaining: number[] = [];
    for (let i = 0; i < LIMIT; i++) {
      const res = await t.api.get('/v1/pets').set(auth(KEYS.exhausted)).expect(200);
      expect(res.headers['ratelimit-policy']).toBe(`"per-key";q=${LIMIT};w=${WINDOW}`);
      remaining.push(parse(res.headers.ratelimit).r);
    }
    expect(remaining).toEqual([4, 3, 2, 1, 0]);
    // Every operation counts against the same key, a create as well as a list.
    const refused = await t.api.post('/v1/pets').set(auth(KEYS.exhausted)).send(buildNewPet()).expect(429);
    expect(refused.body).toEqual({
      code: 'rate_limited',
      message: expect.stringContaining(`${LIMIT} requests in ${WINDOW} s`),
      status: 429,
    });
    const reset = parse(refused.headers.ratelimit).t;
    expect(reset).toBeGreaterThan(0);
    expect(reset).toBeLessThanOrEqual(WINDOW);
    expect(refused.headers['retry-after']).toBe(String(reset));
    expect(parse(refused.headers.ratelimit).r).toBe(0);
    await t.api.get('/v1/pets/1').set(auth(KEYS.exhausted)).expect(429);
    // Refused requests do not reach the store.
    expect(await t.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM pets`).toEqual([{ n: 0 }]);
  });

  test('when one key is spent, then another key still has its own count', async () => {
    await spend(t.api, KEYS.spent, LIMIT);
    await t.api.get('/v1/pets').set(auth(KEYS.spent)).expect(429);
    await t.api.get('/v1/pets').set(auth(KEYS.fresh)).expect(200);
  });

  test('when a request has no valid key, then it gets 401 and is not counted against any key', async () => {
    const missing = await t.api.get('/v1/pets').expect(401);
    const unknown = await t.api.get('/v1/pets').set(auth('not-a-key-0123456789')).expect(401);
    for (const res of [missing, unknown]) expect(res.headers.ratelimit).toBeUndefined();
    expect(await t.sql`SELECT 1 FROM rate_limit_counts WHERE client_id = ${bootstrapClientId('not-a-key-0123456789')}`).toHaveLength(0);
  });

  test('when the probes are called, then they are not limited', async () => {
    await t.api.get('/healthz').expect(200);
    await t.api.get('/readyz').expect(200);
  });

  test('when a key makes requests, then the counts are in PostgreSQL, under the client the key belongs to, where every instance sees them', async () => {
    await spend(t.api, KEYS.counted, 2);
    // What the process reserved and did not spend goes back: the count is what was spent.
    await t.rateLimiter?.flush();
    expect(await t.sql`SELECT count FROM rate_limit_counts WHERE client_id = ${bootstrapClientId(KEYS.counted)}`).toEqual([{ count: 2 }]);
    expect(await t.sql`SELECT 1 FROM rate_limit_counts WHERE client_id = ${KEYS.counted}`).toHaveLength(0);
  });

  test('when a second instance runs on the same database, then it refuses a spent key at once, and what it counts reaches the first', async () => {
    await spend(t.api, KEYS.sharedRefused, LIMIT);
    await spend(t.api, KEYS.sharedCounted, 1);
    await t.rateLimiter?.flush();
    // Its warnings are kept: a 503 among its answers is shown with the cause it logged (CI saw one once).
    const { logging, lines } = captureLogs('warn');
    const spec = await specOfFile();
    const rateLimiter = createRateLimiter(t.sql, { requests: LIMIT, windowSeconds: WINDOW }, logging.logger);
    const app = await createApp({
      spec,
      bootstrapKeys: Object.values(KEYS),
      handlers: withStores(createStores(t.sql, { idempotencyTtlSeconds: 86_400 })),
      logging,
      rateLimiter,
    });
    const api = contractClient(app, await checkerOfFile());
    const statusOf = async (key: string) => ({ status: (await api.get('/v1/pets').set(auth(key))).status, logged: lines.splice(0) });
    expect(await statusOf(KEYS.sharedRefused)).toEqual({ status: 429, logged: [] });
    // …and counts what it lets through where the first instance sees it.
    for (let i = 0; i < LIMIT - 1; i++) expect(await statusOf(KEYS.sharedCounted)).toEqual({ status: 200, logged: [] });
    expect(await statusOf(KEYS.sharedCounted)).toEqual({ status: 429, logged: [] });
    // The first instance holds nothing more of the key's window: the database says 1 + 4.
    await t.api.get('/v1/pets').set(auth(KEYS.sharedCounted)).expect(429);
  });
});

describe('tokens held by requests still being answered', () => {
  test('when every token of the window is held by requests not answered yet, then another waits: it takes the one a 304 gives back, and is refused once the rest are answered', async () => {
    const { logging } = captureLogs('silent');
    const limiter = createRateLimiter(t.sql, { requests: 3, windowSeconds: WINDOW }, logging.logger);
    const client = 'held-tokens-client';
    const held = await Promise.all([1, 2, 3].map(() => limiter.take(client)));
    expect(held.map((d) => d.allowed)).toEqual([true, true, true]);
    let waited: RateDecision | undefined;
    const waiting = limiter.take(client).then((d) => (waited = d));
    // Past the 250 ms in which a spent window is refused without asking the database again.
    await new Promise((r) => setTimeout(r, 400));
    expect(waited).toBeUndefined();
    limiter.refund(client, held[0] as RateDecision);
    expect((await waiting).allowed).toBe(true);
    // Within its deadline only: then refused (429), not failed (503).
    expect(await limiter.take(client, Date.now() + 200)).toMatchObject({ allowed: false, remaining: 0 });
    // Every request answered: nothing held and nothing left, so refused at once.
    [...held.slice(1), await waiting].forEach((d) => limiter.settle(client, d));
    limiter.settle(client, held[0] as RateDecision);
    const started = Date.now();
    expect((await limiter.take(client)).allowed).toBe(false);
    expect(Date.now() - started).toBeLessThan(1_000);
  });
});

describe('tokens given back while requests come', () => {
  test('when a process gives back unspent tokens of a window it had found spent, then the next request takes one of them, not a 429', async () => {
    const { logging } = captureLogs('silent');
    const limiter = createRateLimiter(t.sql, { requests: 4, windowSeconds: WINDOW }, logging.logger);
    const client = 'given-back-client';
    // Four at once reserve the whole window in one statement: spent, as far as this process knows.
    const taken = await Promise.all([1, 2, 3, 4].map(() => limiter.take(client)));
    expect(taken.map((d) => d.allowed)).toEqual([true, true, true, true]);
    // Two answered 304 (given back to this process), two answered: two tokens unspent, nothing held.
    taken.slice(0, 2).forEach((d) => limiter.refund(client, d));
    taken.slice(2).forEach((d) => limiter.settle(client, d));
    // The key goes quiet and the two go back to the database; one request comes while they are on their way.
    const flushed = limiter.flush(0);
    const during = limiter.take(client);
    await flushed;
    const after = limiter.take(client);
    const both = [await during, await after];
    expect(both.map((d) => d.allowed)).toEqual([true, true]);
    // Both answered: the window is spent, and the next is refused at once.
    both.forEach((d) => limiter.settle(client, d));
    const started = Date.now();
    expect(await limiter.take(client)).toMatchObject({ allowed: false, remaining: 0 });
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(await t.sql`SELECT count FROM rate_limit_counts WHERE client_id = ${client}`).toEqual([{ count: 4 }]);
  });
});

describe('reservations held by processes that die', () => {
  test('when 200 processes each reserve for a key with a very large limit and die without giving back, then each cost at most MAX_RESERVATION and the next is let through', async () => {
    const { logging } = captureLogs('silent');
    const huge = { requests: 999_999_999, windowSeconds: WINDOW };
    const client = 'dying-processes-client';
    // Each limiter stands for a process: one request, then gone as after SIGKILL (nothing given back).
    const allowed: boolean[] = [];
    for (let i = 0; i < 200; i++) allowed.push((await createRateLimiter(t.sql, huge, logging.logger).take(client)).allowed);
    expect(allowed.filter((a) => !a)).toHaveLength(0);
    expect(await t.sql`SELECT count FROM rate_limit_counts WHERE client_id = ${client}`).toEqual([{ count: 200 * MAX_RESERVATION }]);
    expect(await createRateLimiter(t.sql, huge, logging.logger).take(client)).toMatchObject({ allowed: true });
  });
});

describe('RATE_LIMIT=off', () => {
  let open: TestApp;
  beforeAll(async () => {
    open = await startTestApp({ rateLimit: 'off', database: 'file' });
  });
  afterAll(() => open.close());

  test('when RATE_LIMIT is off, then no request is limited and no RateLimit headers are sent', async () => {
    for (let i = 0; i < LIMIT + 2; i++) {
      const res = await open.api.get('/v1/pets').set(auth()).expect(200);
      expect(res.headers.ratelimit).toBeUndefined();
      expect(res.headers['ratelimit-policy']).toBeUndefined();
    }
  });
});

/*
 * Bursts: many requests of one key at once, on one process and on two limiters sharing the
 * database, none may pass beyond the limit. A window of 9999 hours (the longest RATE_LIMIT
 * takes) so that no burst straddles a reset.
 */
describe('rate limiting under concurrent bursts', () => {
  const BURST_LIMIT = 50;
  const LONG = { requests: BURST_LIMIT, windowSeconds: WINDOW };
  const keys = ['burst-one-0123456789abcdef', 'burst-two-0123456789abcdef', 'burst-give-0123456789abcde'];
  let b: TestApp;
  let second: { origin: string; close(): Promise<void> };
  let first: { origin: string; close(): Promise<void> };
  let secondLimiter: RateLimiter;
  beforeAll(async () => {
    b = await startTestApp({ bootstrapKeys: keys, rateLimit: LONG, database: 'file' });
    first = await listenOnLoopback(b.app);
    const { logging } = captureLogs('silent');
    secondLimiter = createRateLimiter(b.sql, LONG, logging.logger);
    const app = await createApp({
      spec: b.spec,
      bootstrapKeys: keys,
      handlers: withStores(createStores(b.sql, { idempotencyTtlSeconds: 86_400 })),
      logging,
      rateLimiter: secondLimiter,
    });
    second = await listenOnLoopback(app);
  });
  afterAll(async () => {
    await Promise.all([first.close(), second.close()]);
    await b.close();
  });

  const burst = async (origins: string[], key: string, n: number) => {
    const statuses = await Promise.all(
      Array.from({ length: n }, (_, i) =>
        fetch(`${origins[i % origins.length]}/v1/pets?limit=1`, { headers: { Authorization: `Bearer ${key}` } }).then((r) => r.status),
      ),
    );
    return { passed: statuses.filter((s) => s === 200).length, refused: statuses.filter((s) => s === 429).length };
  };

  test('when 200 requests of one key arrive at once at one process, then exactly the limit passes and the rest get 429', async () => {
    expect(await burst([first.origin], keys[0] as string, 200)).toEqual({ passed: BURST_LIMIT, refused: 200 - BURST_LIMIT });
  });

  test('when 200 requests of one key arrive at once at two instances on one database, then no more than the limit passes in all', async () => {
    const { passed, refused } = await burst([first.origin, second.origin], keys[1] as string, 200);
    expect(passed + refused).toBe(200);
    // Every reservation is granted out of what the window has left: never more than the limit. Each
    // instance has requests waiting until the window is spent, so it spends every token it got.
    expect(passed).toBe(BURST_LIMIT);
    // The count in the database is what was spent: the part of a reservation that was not granted went back.
    await Promise.all([b.rateLimiter?.flush(0), secondLimiter.flush(0)]);
    expect(await b.sql`SELECT count FROM rate_limit_counts WHERE client_id = ${bootstrapClientId(keys[1] as string)}`).toEqual([
      { count: BURST_LIMIT },
    ]);
  });

  test('when a process holds requests it reserved and the key goes quiet there, then it gives them back and another instance spends them', async () => {
    const key = keys[2] as string;
    const owner = bootstrapClientId(key);
    // One request: the process reserves an eighth of the window (6) and spends one.
    expect(await burst([first.origin], key, 1)).toEqual({ passed: 1, refused: 0 });
    expect(await b.sql`SELECT count FROM rate_limit_counts WHERE client_id = ${owner}`).toEqual([{ count: 6 }]);
    await b.rateLimiter?.flush(0);
    expect(await b.sql`SELECT count FROM rate_limit_counts WHERE client_id = ${owner}`).toEqual([{ count: 1 }]);
    expect(await burst([second.origin], key, 100)).toEqual({ passed: BURST_LIMIT - 1, refused: 100 - BURST_LIMIT + 1 });
  });
});
