import supertest from 'supertest';
import { createApp, createMetricsApp } from '../../../src/app';
import { withStores } from '../../../src/handlers';
import { createStores } from '../../../src/store';
import { createKeyRegistry } from '../../../src/store/keys/registry';
import { connect } from '../../../src/store/database/db';
import { listKeys, revokeKey, rotateKey } from '../../../src/store/keys/admin';
import { mintKey } from '../../../src/store/keys/format';
import { proxyTo } from '../../support/proxy';
import {
  API_KEY,
  type TestApp,
  auth,
  buildNewPet,
  captureLogs,
  contractClient,
  insertPet,
  issueKey,
  testAppForFile,
  until,
  specOfFile,
  checkerOfFile,
} from '../../support/harness';
import { embeddedUrl } from '../../support/databases';

// The cases that wait for a key to expire or a rotation's grace to end, in seconds of the wall
// clock, are test/system/http/keyTimes.test.ts.
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** The key with one character of its secret changed: its checksum no longer matches. */
const mistype = (key: string) => `${key.slice(0, 20)}${key[20] === 'A' ? 'B' : 'A'}${key.slice(21)}`;

describe('managed API keys: scopes', () => {
  const t = testAppForFile({ database: 'file' });

  test.each([
    ['listPets', 'pets:write', 'pets:read', 'get', '/v1/pets'],
    ['getPet', 'pets:write', 'pets:read', 'get', '/v1/pets/1'],
    ['createPet', 'pets:read', 'pets:write', 'post', '/v1/pets'],
  ] as const)(
    'when %s is called with a key holding only %s, then 403 insufficient_scope with a challenge naming %s',
    async (operationId, held, needed, method, path) => {
      const { key } = await issueKey(t, { scopes: [held] });
      const req = t.api[method](path).set(auth(key));
      const res = await (method === 'post' ? req.send(buildNewPet()) : req).expect(403);
      expect(res.body).toEqual({
        code: 'insufficient_scope',
        message: `This API key lacks the scope ${needed}, which ${operationId} needs`,
        status: 403,
      });
      expect(res.headers['www-authenticate']).toBe(`Bearer realm="animal-store", error="insufficient_scope", scope="${needed}"`);
    },
  );

  test('when a key holds the scope each operation needs, then it is served: a read key lists and fetches, a write key creates, and nothing was stored by the refusals', async () => {
    const reader = (await issueKey(t, { scopes: ['pets:read'] })).key;
    const writer = (await issueKey(t, { scopes: ['pets:write'] })).key;
    const before = await t.sql`SELECT count(*)::int AS n FROM pets`;
    await t.api.post('/v1/pets').set(auth(reader)).send(buildNewPet()).expect(403);
    expect(await t.sql`SELECT count(*)::int AS n FROM pets`).toEqual(before);
    const created = await t.api
      .post('/v1/pets')
      .set(auth(writer))
      .send(buildNewPet({ name: 'Scoped' }))
      .expect(201);
    await t.api.get(`/v1/pets/${created.body.id}`).set(auth(reader)).expect(200);
    const list = await t.api.get('/v1/pets?limit=100').set(auth(reader)).expect(200);
    expect(list.body.map((p: { id: number }) => p.id)).toContain(created.body.id);
  });

  test('when an API_KEYS key is used, then it holds every scope (development and bootstrap) and never expires', async () => {
    const created = await t.api.post('/v1/pets').set(auth(API_KEY)).send(buildNewPet()).expect(201);
    expect(created.headers['api-key-expiration']).toBeUndefined();
    await t.api.get(`/v1/pets/${created.body.id}`).set(auth(API_KEY)).expect(200);
  });

  test('when a key is unknown, then a path that does not exist is still 401 before 404, and the scopes are asked only of a matched operation', async () => {
    await t.api.get('/v1/nothing').set(auth(mintKey().text)).expect(401);
    const { key } = await issueKey(t, { scopes: ['pets:write'] });
    await t.api.get('/v1/nothing').set(auth(key)).expect(404);
  });
});

describe('managed API keys: the key text, expiry and revocation', () => {
  const t = testAppForFile({ database: 'file' });

  test.each([
    ['a character of its secret changed', (k: string) => mistype(k)],
    ['its last character cut', (k: string) => k.slice(0, -1)],
    ['its checksum cut', (k: string) => k.slice(0, -6)],
    ['the prefix alone', () => 'asa_'],
  ])('when a key is sent with %s, then 401 saying it is mistyped or incomplete', async (_what, change) => {
    const { key } = await issueKey(t);
    const res = await t.api
      .get('/v1/pets')
      .set(auth(change(key)))
      .expect(401);
    expect(res.body).toEqual({ code: 'unauthorized', message: expect.stringContaining('mistyped or incomplete'), status: 401 });
    expect(res.headers['www-authenticate']).toBe(
      'Bearer realm="animal-store", error="invalid_token", error_description="The API key is mistyped or incomplete"',
    );
  });

  test('when a well-formed key that was never issued is sent, then 401 Invalid API key', async () => {
    const res = await t.api.get('/v1/pets').set(auth(mintKey().text)).expect(401);
    expect(res.body).toEqual({ code: 'unauthorized', message: 'Invalid API key', status: 401 });
  });

  test('when a key is revoked, then this instance refuses it within 1 s of the commit, saying it was revoked', async () => {
    const { key, listing } = await issueKey(t);
    await t.api.get('/v1/pets').set(auth(key)).expect(200);
    await revokeKey(t.sql, { id: listing.id, actor: 'test' });
    const committed = Date.now();
    let res = await t.api.get('/v1/pets').set(auth(key));
    while (res.status === 200) res = await t.api.get('/v1/pets').set(auth(key));
    expect(Date.now() - committed).toBeLessThan(1_000);
    expect(res.status).toBe(401);
    expect(res.body.message).toBe('Invalid API key: it was revoked');
    expect(res.headers['www-authenticate']).toContain('error_description="The API key was revoked"');
    // And from then on, never again.
    for (let i = 0; i < 5; i++) await t.api.get('/v1/pets').set(auth(key)).expect(401);
  });

  test('when create, rotate and revoke run, then each is a row of the audit table: who, when, what', async () => {
    const { listing } = await issueKey(t, { client: 'audited', scopes: ['pets:read'] });
    const rotated = await rotateKey(t.sql, { id: listing.prefix, graceSeconds: 60, actor: 'bob' });
    await revokeKey(t.sql, { id: rotated.listing.id, actor: 'carol' });
    const rows = await t.sql<{ actor: string; action: string; keyId: string; details: string; recent: boolean }[]>`
      SELECT a.actor, a.action, a.key_id AS "keyId", a.details::text AS details, a.at > now() - interval '1 minute' AS recent
      FROM api_key_audit a JOIN api_clients c ON c.id = a.client_id
      WHERE c.name = 'audited' ORDER BY a.id`;
    expect(rows.map((r) => ({ ...r, details: JSON.parse(r.details) as unknown }))).toEqual([
      { actor: 'test', action: 'create', keyId: listing.id, details: expect.objectContaining({ scopes: ['pets:read'] }), recent: true },
      {
        actor: 'bob',
        action: 'rotate',
        keyId: listing.id,
        details: expect.objectContaining({ successor: rotated.listing.id, graceSeconds: 60 }),
        recent: true,
      },
      { actor: 'carol', action: 'revoke', keyId: rotated.listing.id, details: expect.any(Object), recent: true },
    ]);
  });
});

describe('managed API keys: nothing secret leaks', () => {
  const t = testAppForFile({ database: 'file' });

  test('when keys are made, rotated, used, mistyped and revoked, then no secret is in the database (every table dumped), the logs, the metrics or an answer', async () => {
    const made = await issueKey(t, { client: 'leak-check', note: 'dashboard' });
    const rotated = await rotateKey(t.sql, { id: made.listing.id, graceSeconds: 3600, actor: 'test' });
    await until(() => t.keys.lookup(rotated.listing.id).state === 'found');
    const answers = [
      await t.api.get('/v1/pets').set(auth(made.key)).expect(200),
      await t.api.post('/v1/pets').set(auth(rotated.key)).send({}).expect(400),
      await t.api
        .get('/v1/pets')
        .set(auth(mistype(rotated.key)))
        .expect(401),
      await t.api.get('/v1/nothing').set(auth(rotated.key)).expect(404),
    ];
    await revokeKey(t.sql, { id: rotated.listing.id, actor: 'test' });
    await t.keys.stop();
    const secrets = [made.key, rotated.key].flatMap((k) => [k, k.slice(17, 49), mistype(k)]);

    const tables = await t.sql<{ name: string }[]>`
      SELECT table_name AS name FROM information_schema.tables WHERE table_schema = current_schema() ORDER BY table_name`;
    expect(tables.map((r) => r.name)).toEqual(expect.arrayContaining(['api_keys', 'api_key_audit', 'api_clients']));
    let dump = '';
    for (const { name } of tables)
      dump += (await t.sql.unsafe<{ row: string }[]>(`SELECT row_to_json(t)::text AS row FROM "${name}" t`)).map((r) => r.row).join('\n');
    expect(dump).toContain(made.listing.id);
    const metrics = (await supertest(createMetricsApp(t.metrics)).get('/metrics').expect(200)).text;
    const seen = [dump, JSON.stringify(t.logs()), metrics, ...answers.map((a) => `${JSON.stringify(a.headers)}${a.text}`)];
    for (const secret of secrets) expect(seen.filter((text) => text.includes(secret))).toEqual([]);
  });
});

/** An app on `url` as production builds it, with a key registry of its own: its statements counted when asked. */
async function appOn(
  url: string,
  options: { statements?: (text: string) => void; registry?: { refreshMs: number; maxStaleMs: number } } = {},
) {
  const sql = connect(url, { max: 1, statements: options.statements && ((_c, text) => options.statements?.(text)) });
  const { logging } = captureLogs('silent');
  const keys = createKeyRegistry(sql, { logger: logging.logger, ...options.registry });
  await keys.ready;
  const spec = await specOfFile();
  const app = await createApp({
    spec,
    bootstrapKeys: [API_KEY],
    keyRegistry: keys,
    handlers: withStores(createStores(sql, { idempotencyTtlSeconds: 86_400 })),
    logging,
  });
  const api = contractClient(app, await checkerOfFile());
  // Compiling the app and the checker holds the event loop, on a busy machine for longer than the
  // staleness bound: the keys are served once a refresh has run since (as a test's first request expects).
  await until(() => keys.lookup('none').state !== 'stale');
  return {
    api,
    keys,
    async close() {
      await keys.stop();
      await sql.end({ timeout: 1 });
    },
  };
}

/** The URL of the test app's database: the embedded one, or its database of its own on the server. */
async function urlOf(t: TestApp): Promise<string> {
  if (process.env.TEST_DB_MODE === 'embedded') return embeddedUrl();
  const [{ db } = { db: '' }] = await t.sql<{ db: string }[]>`SELECT current_database() AS db`;
  const url = new URL(process.env.TEST_ADMIN_URL as string);
  url.pathname = `/${db}`;
  return url.toString();
}

describe('managed API keys: no lookup per request, last use once a minute', () => {
  const t = testAppForFile({ database: 'file' });
  let statements: string[] = [];
  let other: Awaited<ReturnType<typeof appOn>>;
  let reader: string;
  let lastUsed: Awaited<ReturnType<typeof issueKey>>;
  beforeAll(async () => {
    reader = (await issueKey(t, { scopes: ['pets:read'] })).key;
    lastUsed = await issueKey(t, { client: 'last-used', scopes: ['pets:read'] });
    // A second instance on the same database, which reads the keys once and not again for ten minutes:
    // any statement counted below is a request's own (no rate limit: its reservations are statements too).
    other = await appOn(await urlOf(t), {
      statements: (text) => statements.push(text),
      registry: { refreshMs: 600_000, maxStaleMs: 600_000 },
    });
  });
  afterAll(() => other.close());

  test('when a key is mistyped, unknown or lacks the scope, then it is refused with no query at all (and a served request does make some)', async () => {
    statements = [];
    await other.api
      .get('/v1/pets')
      .set(auth(mistype(reader)))
      .expect(401);
    await other.api
      .get('/v1/pets')
      .set(auth(reader.slice(0, -1)))
      .expect(401);
    await other.api.get('/v1/pets').set(auth(mintKey().text)).expect(401);
    await other.api.post('/v1/pets').set(auth(reader)).send(buildNewPet()).expect(403);
    expect(statements).toEqual([]);
    await other.api.get('/v1/pets').set(auth(reader)).expect(200);
    expect(statements.length).toBeGreaterThan(0);
  });

  test('when a key makes many requests within a minute, then its last use is written once, off the request path', async () => {
    const pet = await insertPet(t.sql, { ...buildNewPet(), status: 'available' });
    statements = [];
    for (let i = 0; i < 20; i++) await other.api.get(`/v1/pets/${pet.id}`).set(auth(lastUsed.key)).expect(200);
    expect(statements.filter((s) => /last_used_at/.test(s))).toEqual([]);
    // The use is written with the registry's next refresh, or as it stops: the second instance stops now.
    await other.keys.stop();
    expect(statements.filter((s) => /UPDATE api_keys SET last_used_at/.test(s))).toHaveLength(1);
    const [row] = await listKeys(t.sql, { client: 'last-used' });
    expect(row?.id).toBe(lastUsed.listing.id);
    expect(Date.now() - (row?.lastUsedAt?.getTime() ?? 0)).toBeLessThan(10_000);
  });
});

describe('managed API keys: start-up', () => {
  const t = testAppForFile({ database: 'file' });

  test('when the keys have not been read yet, then /readyz says connecting (a load balancer sends nothing), and managed keys get 503, never a guess', async () => {
    const { key } = await issueKey(t);
    const sql = connect(await urlOf(t), { max: 1 });
    const { logging } = captureLogs('silent');
    // As while start-up still migrates the database: the registry does not read it yet.
    const keys = createKeyRegistry(sql, { logger: logging.logger, after: new Promise(() => {}) });
    try {
      const spec = await specOfFile();
      const app = await createApp({
        spec,
        bootstrapKeys: [API_KEY],
        keyRegistry: keys,
        handlers: withStores(createStores(sql, { idempotencyTtlSeconds: 86_400, keyRegistry: keys })),
        logging,
      });
      const api = contractClient(app, await checkerOfFile());
      expect(keys.loaded()).toBe(false);
      const ready = await api.get('/readyz').expect(503);
      expect(ready.body).toEqual({ code: 'service_unavailable', message: 'Not ready: connecting', status: 503 });
      await api.get('/v1/pets').set(auth(key)).expect(503);
      // Nor does an API_KEYS key reach the database before the service says it is ready.
      const early = await api.get('/v1/pets').set(auth(API_KEY)).expect(503);
      expect(early.body.message).toBe('The service is starting (connecting); retry shortly');
    } finally {
      await keys.stop();
      await sql.end();
    }
  });
});

describe('managed API keys: the database unreachable', () => {
  const t = testAppForFile({ database: 'file' });

  test('when the keys cannot be refreshed for over 1 s, then managed keys get 503 (never a stale yes) while API_KEYS keys still work, and they come back when the database does', async () => {
    const { key } = await issueKey(t);
    const proxy = await proxyTo(await urlOf(t));
    const other = await appOn(proxy.url);
    try {
      // A path no operation has: answered after the key, without the database.
      await other.api.get('/v1/nothing').set(auth(key)).expect(404);
      proxy.freeze();
      await sleep(1_100);
      const refused = await other.api.get('/v1/nothing').set(auth(key)).expect(503);
      expect(refused.body).toEqual({
        code: 'service_unavailable',
        message: expect.stringContaining('API keys cannot be checked'),
        status: 503,
      });
      expect(refused.headers['retry-after']).toBe('1');
      await other.api.get('/v1/nothing').set(auth(API_KEY)).expect(404);
      await other.api.get('/v1/nothing').set(auth('not-a-key-0123456789')).expect(401);
      proxy.thaw();
      const back = Date.now();
      let res = await other.api.get('/v1/nothing').set(auth(key));
      while (res.status === 503 && Date.now() - back < 5_000) {
        await sleep(20);
        res = await other.api.get('/v1/nothing').set(auth(key));
      }
      expect(res.status).toBe(404);
      expect(Date.now() - back).toBeLessThan(2_000);
    } finally {
      proxy.thaw();
      await other.close();
      proxy.close();
    }
  });
});

describe('managed API keys: the database restored under a running instance', () => {
  const t = testAppForFile();

  test('when the key revision goes back, then the keys are read again whole: a key made since is honoured, and one the database no longer holds is not', async () => {
    const earlier = [await issueKey(t), await issueKey(t)];
    for (const { key } of earlier) await t.api.get('/v1/pets').set(auth(key)).expect(200);
    // What a restore from a backup taken before those keys leaves: neither key, and the revision back at 0.
    await t.sql.begin(async (tx) => {
      await tx`DELETE FROM api_key_audit`;
      await tx`DELETE FROM api_keys`;
      await tx`UPDATE api_key_revision SET revision = 0`;
    });
    // Revision 1, below the 2 the registry has seen: read only as "changed since 2", it would never be.
    const since = await issueKey(t);
    await t.api.get('/v1/pets').set(auth(since.key)).expect(200);
    for (const { key } of earlier) {
      const res = await t.api.get('/v1/pets').set(auth(key)).expect(401);
      expect(res.body).toEqual({ code: 'unauthorized', message: 'Invalid API key', status: 401 });
    }
    expect(t.logs()).toContainEqual(expect.objectContaining({ level: 40, revision: 1, seen: 2 }));
  });
});
