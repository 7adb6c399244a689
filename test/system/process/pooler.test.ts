import { call, waitFor } from '../../support/load';
import { type PgBouncer, pgbouncerUnavailable, startPgBouncer } from '../../support/pgbouncer';
import { countAcrossInstances } from '../../support/sharedLimit';
import { waitUntilListening } from '../../../scripts/lib/processes';
import { type Running, reapAll, spawnServer, startServer, stop } from '../../support/processes';
import { startReceiver } from '../../support/receiver';
import { type ThrowawayPostgres, createThrowawayPostgres, describeWithThrowawayPostgres } from '../../support/throwawayPostgres';

// The service behind PgBouncer in transaction mode (Debian's pgbouncer, as shipped), in front
// of a throwaway cluster: two instances, so that rate limits and idempotency are shared through it.
// RATE_LIMIT is one limit for every key (100 an hour): each test, and each load connection, has
// keys of its own, and a load connection moves to its next key after a key's 100 requests.
const KEY = 'pooled-key-0123456789abcdef';
const LIMITED = 'limited-key-0123456789abcdef';
const HOOKS = 'hooks-key-0123456789abcdef';
const PER_KEY = 100;
const LOAD_KEYS = Array.from({ length: 30 }, (_, i) => Array.from({ length: 10 }, (_, k) => `load-key-${i}-${k}-0123456789abcdef`));
const json = (key: string) => ({ Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' });

const why = pgbouncerUnavailable();
if (why && process.env.REQUIRE_THROWAWAY_POSTGRES === '1') throw new Error(`the pooler tests need PgBouncer: ${why}`);

(why ? describe.skip : describeWithThrowawayPostgres)(`behind PgBouncer in transaction mode${why ? ` (skipped: ${why})` : ''}`, () => {
  let pg: ThrowawayPostgres;
  let bouncer: PgBouncer;
  let a: Running;
  let b: Running;
  beforeAll(async () => {
    pg = await createThrowawayPostgres();
    await pg.start();
    // Fewer server connections than the two instances' pools ask for: the pooler shares them.
    bouncer = await startPgBouncer(pg.port, 'transaction', 8);
    const env = {
      DATABASE_URL: bouncer.url,
      DATABASE_POOL_MODE: 'transaction',
      DATABASE_POOL_SIZE: '20',
      API_KEYS: [KEY, LIMITED, HOOKS, ...LOAD_KEYS.flat()].join(','),
      RATE_LIMIT: `${PER_KEY}/1h`,
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
    };
    [a, b] = await Promise.all([startServer(env), startServer(env)]);
    await waitReady(a);
    await waitReady(b);
  }, 120_000);
  afterAll(async () => {
    for (const s of [a, b]) if (s) expect(await stop(s)).toBe(0);
    reapAll();
    await bouncer?.stop();
    await pg?.destroy();
  }, 60_000);

  const waitReady = async (s: Running) => {
    for (let i = 0; i < 100 && (await call(`${s.origin}/readyz`)).status !== 200; i++) await new Promise((r) => setTimeout(r, 100));
  };
  const create = (server: Running, body: object, extra: Record<string, string> = {}) =>
    call(`${server.baseUrl}/pets`, { method: 'POST', headers: { ...json(KEY), ...extra }, body: JSON.stringify(body) });

  test('when the service starts behind it without DATABASE_POOL_MODE, then /readyz gives the reason code pooler_refused, and the log says what the pooler refused', async () => {
    const s = spawnServer({ DATABASE_URL: bouncer.url, API_KEYS: KEY });
    try {
      const origin = new URL(await waitUntilListening(s.child, s.output)).origin;
      let r = await call(`${origin}/readyz`);
      for (let i = 0; i < 50 && !/refused/.test(String(r.body?.message)); i++) {
        await new Promise((res) => setTimeout(res, 100));
        r = await call(`${origin}/readyz`);
      }
      expect(r.status).toBe(503);
      // A reason code, and none of the pooler's own words (they can name the database): /readyz needs no key.
      expect(r.body).toEqual({ code: 'service_unavailable', message: 'Not ready: pooler_refused', status: 503 });
      expect(s.output()).toContain('unsupported startup parameter: statement_timeout');
      expect(s.output()).toContain(
        '(08P01, protocol violation); behind a transaction-mode pooler such as PgBouncer, set DATABASE_POOL_MODE=transaction',
      );
      expect(s.output()).toContain('refused the connection');
      expect(s.output()).not.toContain('unreachable');
    } finally {
      await stop(s);
    }
  }, 60_000);

  test('when animals are created, listed and fetched through the pooler, then every answer is right', async () => {
    const created = await Promise.all(
      Array.from({ length: 20 }, (_, i) => create(i % 2 ? a : b, { name: `Pooled ${i}`, categoryId: i + 1, status: 'pending' })),
    );
    expect(created.map((r) => r.status)).toEqual(Array(20).fill(201));
    for (const r of created) {
      const got = await call(`${(r.body.id % 2 ? b : a).baseUrl}/pets/${r.body.id}`, { headers: json(KEY) });
      expect(got.body).toEqual(r.body);
    }
    // Only this test makes pending animals: the list is theirs, whatever ran before.
    const listed = await call(`${a.baseUrl}/pets?status=pending&limit=100`, { headers: json(KEY) });
    expect(listed.status).toBe(200);
    expect(listed.body.map((p: { id: number }) => p.id)).toEqual(created.map((r) => r.body.id).sort((x, y) => x - y));
  }, 30_000);

  test('when an Idempotency-Key is reused through the pooler, then it replays, refuses another body, and a race creates one animal', async () => {
    const body = { name: 'Pooled once', categoryId: 3 };
    const first = await create(a, body, { 'Idempotency-Key': 'pooled-1' });
    const again = await create(b, body, { 'Idempotency-Key': 'pooled-1' });
    expect(again.body).toEqual(first.body);
    expect(again.headers?.get('idempotent-replayed')).toBe('true');
    expect((await create(b, { ...body, name: 'Other' }, { 'Idempotency-Key': 'pooled-1' })).status).toBe(422);
    const raced = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        create(i % 2 ? a : b, { name: 'Raced pooled', categoryId: 4 }, { 'Idempotency-Key': 'pooled-race' }),
      ),
    );
    for (const r of raced) expect([201, 409]).toContain(r.status);
    expect(await pg.psql("SELECT count(*) FROM pets WHERE name = 'Raced pooled'")).toBe('1\n');
  }, 30_000);

  test('when one key calls both instances, then the rate limit counts them together through the pooler', async () => {
    const counted = await countAcrossInstances(a, b, LIMITED, { limit: 100, onA: 60 }, (q) => pg.psql(q));
    expect(counted.refusedOnB.code).toBe('rate_limited');
    expect(counted.allowedOnB).toBe(40);
    expect(counted.aAfter).toBe(429);
  }, 150_000);

  test('when a statement outlives its deadline through the pooler, then the request gets 503 and the pooler connection is free again', async () => {
    // Hold a lock on pets from outside the pooler, then list: the list waits, is cancelled at its deadline.
    const holder = pg.psql('BEGIN; LOCK TABLE pets IN ACCESS EXCLUSIVE MODE; SELECT pg_sleep(7); COMMIT;');
    // The list is sent once the lock is held (granted, in pg_locks), however slowly psql started.
    const locked =
      "SELECT count(*) FROM pg_locks l JOIN pg_class c ON c.oid = l.relation WHERE c.relname = 'pets' AND l.mode = 'AccessExclusiveLock' AND l.granted";
    await waitFor(async () => (await pg.psql(locked)) === '1\n');
    const blocked = await call(`${a.baseUrl}/pets`, { headers: json(KEY) }, 20_000);
    expect(blocked.status).toBe(503);
    await holder;
    expect((await call(`${a.baseUrl}/pets?limit=1`, { headers: json(KEY) })).status).toBe(200);
  }, 30_000);

  test('when 30 connections create and list for 5 s through the pooler, then nothing fails: no 5xx, no error', async () => {
    const statuses = new Map<number, number>();
    const end = Date.now() + 5_000;
    await Promise.all(
      Array.from({ length: 30 }, async (_, i) => {
        for (let j = 0; Date.now() < end && j < PER_KEY * 10; j++) {
          const server = (i + j) % 2 ? a : b;
          const key = LOAD_KEYS[i]?.[Math.floor(j / PER_KEY)] as string;
          const r =
            j % 2
              ? await call(`${server.baseUrl}/pets?limit=20`, { headers: json(key) })
              : await call(`${server.baseUrl}/pets`, {
                  method: 'POST',
                  headers: { ...json(key), 'Idempotency-Key': `load-${i}-${j}` },
                  body: JSON.stringify({ name: `Load ${i}-${j}`, categoryId: 1 }),
                });
          statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
        }
      }),
    );
    const total = [...statuses.values()].reduce((x, y) => x + y, 0);
    expect(Object.fromEntries(statuses)).toEqual({ 200: expect.any(Number), 201: expect.any(Number) });
    expect(total).toBeGreaterThan(100);
    process.stdout.write(
      `through PgBouncer (transaction mode, 8 server connections), 30 connections for 5 s: ${JSON.stringify(Object.fromEntries(statuses))}\n`,
    );
  }, 30_000);

  test('when animals are created through both instances with an endpoint subscribed, then the workers claim through the pooler and deliver each event once', async () => {
    const receiver = await startReceiver();
    try {
      const made = await call(`${a.baseUrl}/webhook-endpoints`, {
        method: 'POST',
        headers: json(HOOKS),
        body: JSON.stringify({ url: receiver.url, events: ['pet.created'] }),
      });
      expect(made.status).toBe(201);
      const created = await Promise.all(
        Array.from({ length: 60 }, (_, i) =>
          call(`${(i % 2 ? a : b).baseUrl}/pets`, {
            method: 'POST',
            headers: json(HOOKS),
            body: JSON.stringify({ name: `Pooled hook ${i}`, categoryId: i }),
          }),
        ),
      );
      expect(created.map((r) => r.status)).toEqual(Array(60).fill(201));
      // Every delivery settled in the outbox (none pending: no worker will send one again), then what came is counted.
      const endpoint = (made.body as { id: string }).id;
      const pending = `SELECT count(*) FROM webhook_deliveries WHERE endpoint_id = '${endpoint}' AND state = 'pending'`;
      await waitFor(async () => receiver.received.length >= 60 && (await pg.psql(pending)) === '0\n', { timeoutMs: 20_000 });
      const petIds = receiver.received.map((r) => JSON.parse(r.body).data.id as number).sort((x, y) => x - y);
      expect(petIds).toEqual(created.map((r) => r.body.id as number).sort((x, y) => x - y));
    } finally {
      await receiver.close();
      await call(`${a.baseUrl}/webhook-endpoints`, { headers: json(HOOKS) }).then((r) =>
        Promise.all(
          (r.body as { id: string }[]).map((e) =>
            call(`${a.baseUrl}/webhook-endpoints/${e.id}`, { method: 'DELETE', headers: json(HOOKS) }),
          ),
        ),
      );
    }
  }, 60_000);
});
