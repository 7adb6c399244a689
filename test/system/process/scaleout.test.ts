import { call } from '../../support/load';
import { countAcrossInstances } from '../../support/sharedLimit';
import { type Running, reapAll, startServer, stop } from '../../support/processes';
import { type ThrowawayPostgres, createThrowawayPostgres, describeWithThrowawayPostgres } from '../../support/throwawayPostgres';

// Two instances of the service (real processes) behind an imagined load balancer, on one
// PostgreSQL: they must act as one service.
const WRITER = 'writer-key-0123456789abcdef';
const COUNTED = 'counted-key-0123456789abcdef';
const BURST = 'burst-key-0123456789abcdef';
const LIMIT = 300;
const json = (key: string) => ({ Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' });

describeWithThrowawayPostgres('two instances on one database', () => {
  let pg: ThrowawayPostgres;
  let a: Running;
  let b: Running;
  beforeAll(async () => {
    pg = await createThrowawayPostgres();
    await pg.start();
    const env = { DATABASE_URL: pg.url, API_KEYS: `${WRITER},${COUNTED},${BURST}`, RATE_LIMIT: `${LIMIT}/1h` };
    [a, b] = await Promise.all([startServer(env), startServer(env)]);
  }, 90_000);
  afterAll(async () => {
    for (const s of [a, b]) if (s) expect(await stop(s)).toBe(0);
    reapAll();
    await pg?.destroy();
  }, 60_000);

  const create = (server: Running, body: object, extra: Record<string, string> = {}) =>
    call(`${server.baseUrl}/pets`, { method: 'POST', headers: { ...json(WRITER), ...extra }, body: JSON.stringify(body) });

  test('when creates are spread over both instances, then ids are unique and each is readable from either', async () => {
    const results = await Promise.all(Array.from({ length: 80 }, (_, i) => create(i % 2 ? a : b, { name: `Spread ${i}`, categoryId: i })));
    expect(results.map((r) => r.status)).toEqual(Array(80).fill(201));
    const ids = results.map((r) => r.body.id);
    expect(new Set(ids).size).toBe(80);
    const fromOther = await Promise.all(
      results.map((r, i) => call(`${(i % 2 ? b : a).baseUrl}/pets/${r.body.id}`, { headers: json(WRITER) })),
    );
    expect(fromOther.map((r) => r.body)).toEqual(results.map((r) => r.body));
  });

  test('when an Idempotency-Key is sent to one instance, then the other honours it', async () => {
    const body = { name: 'Retried elsewhere', categoryId: 7 };
    const first = await create(a, body, { 'Idempotency-Key': 'scale-out-1' });
    expect(first.status).toBe(201);
    const retried = await create(b, body, { 'Idempotency-Key': 'scale-out-1' });
    expect(retried.status).toBe(201);
    expect(retried.body).toEqual(first.body);
    expect(retried.headers?.get('idempotent-replayed')).toBe('true');
    const changed = await create(b, { ...body, name: 'Something else' }, { 'Idempotency-Key': 'scale-out-1' });
    expect(changed.status).toBe(422);
    expect(await pg.psql("SELECT count(*) FROM pets WHERE name = 'Retried elsewhere'")).toBe('1\n');
  });

  test('when the same Idempotency-Key is sent to both at once, then one animal is created', async () => {
    const body = { name: 'Raced', categoryId: 8 };
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) => create(i % 2 ? a : b, body, { 'Idempotency-Key': 'scale-out-race' })),
    );
    for (const r of results) expect([201, 409]).toContain(r.status);
    expect(new Set(results.filter((r) => r.status === 201).map((r) => r.body.id)).size).toBe(1);
    expect(await pg.psql("SELECT count(*) FROM pets WHERE name = 'Raced'")).toBe('1\n');
  });

  test('when a key calls both instances, then the rate limit counts them together', async () => {
    const onA = LIMIT * 0.6;
    const counted = await countAcrossInstances(a, b, COUNTED, { limit: LIMIT, onA }, (q) => pg.psql(q));
    expect(counted.refusedOnB.code).toBe('rate_limited');
    expect(counted.allowedOnB).toBe(LIMIT - onA);
    // And A, rereading the count, refuses too.
    expect(counted.aAfter).toBe(429);
  }, 150_000);

  test('when a burst of one key hits both instances at once, then no more than the limit passes in all', async () => {
    const list = (server: Running) => call(`${server.baseUrl}/pets?limit=1`, { headers: json(BURST) }, 30_000);
    // A burst within one window: near the top of the hour, wait for the next one.
    const probe = await list(a);
    const reset = Number(/t=(\d+)/.exec(probe.headers?.get('ratelimit') ?? '')?.[1]);
    if (reset < 30) await new Promise((r) => setTimeout(r, (reset + 1) * 1000));
    const spent = reset < 30 ? 0 : 1;
    const statuses = (await Promise.all(Array.from({ length: 2 * LIMIT }, (_, i) => list(i % 2 ? a : b)))).map((r) => r.status);
    // With the probe's request, exactly the limit passes; every other request is refused.
    const passed = statuses.filter((s) => s === 200).length;
    expect({ passed: passed + spent, refused: statuses.filter((s) => s === 429).length }).toEqual({
      passed: LIMIT,
      refused: 2 * LIMIT - passed,
    });
  }, 120_000);
});
