import { bootstrapClientId } from '../../../src/http/auth';
import { sweepExpired } from '../../../src/store';
import { API_KEY, OTHER_API_KEY, type Pet, auth, buildNewPet, testAppForFile } from '../../support/harness';

// POST /v1/pets with Idempotency-Key (IETF httpapi idempotency-key draft), through HTTP on a real PostgreSQL.
const t = testAppForFile();

let n = 0;
const newKey = () => `idem-${Date.now()}-${++n}`;
const petsNamed = async (name: string) => t.sql<Pet[]>`SELECT id, name, category_id AS "categoryId", status FROM pets WHERE name = ${name}`;
const owner = bootstrapClientId;

const create = (body: object, key?: string, apiKey = API_KEY) => {
  const req = t.api.post('/v1/pets').set(auth(apiKey));
  if (key !== undefined) req.set('Idempotency-Key', key);
  return req.send(body);
};

describe('POST /v1/pets with an Idempotency-Key', () => {
  test('when the same key and body are sent again, then the first response is replayed and nothing new is stored', async () => {
    const key = newKey();
    const body = buildNewPet();
    const first = await create(body, key).expect(201);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    const again = await create(body, key).expect(201);
    const third = await create(body, key).expect(201);
    expect(again.body).toEqual(first.body);
    expect(third.body).toEqual(first.body);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(await petsNamed(body.name)).toEqual([first.body]);
  });

  test('when the same key comes with a different body, then 422 and nothing is stored', async () => {
    const key = newKey();
    const body = buildNewPet();
    await create(body, key).expect(201);
    const other = { ...body, name: `${body.name} (changed)` };
    const res = await create(other, key).expect(422);
    expect(res.body).toEqual({ code: 'idempotency_key_reused', message: expect.stringContaining('different request body'), status: 422 });
    expect(await petsNamed(other.name)).toEqual([]);
  });

  test('when the body differs only in key order or spacing, then it is a different body (the fingerprint is of the bytes sent)', async () => {
    const key = newKey();
    const body = buildNewPet();
    await create(body, key).expect(201);
    await t.api
      .post('/v1/pets')
      .set(auth())
      .set('Idempotency-Key', key)
      .set('Content-Type', 'application/json')
      .send(JSON.stringify(body, null, 2))
      .expect(422);
  });

  test('when another API key uses the same Idempotency-Key, then it is a separate request: keys are scoped to the caller', async () => {
    const key = newKey();
    const body = buildNewPet();
    const mine = await create(body, key, API_KEY).expect(201);
    const theirs = await create(body, key, OTHER_API_KEY).expect(201);
    expect(theirs.body.id).not.toBe(mine.body.id);
    expect(theirs.headers['idempotent-replayed']).toBeUndefined();
  });

  test("when the key is sent in the draft's quoted form, then it is the same key as the bare form", async () => {
    const key = newKey();
    const body = buildNewPet();
    const bare = await create(body, key).expect(201);
    const quoted = await create(body, `"${key}"`).expect(201);
    expect(quoted.body).toEqual(bare.body);
    expect(quoted.headers['idempotent-replayed']).toBe('true');
  });

  test('when the record has expired, then the key starts afresh', async () => {
    const key = newKey();
    const body = buildNewPet();
    const first = await create(body, key).expect(201);
    await t.sql`UPDATE idempotency_keys SET expires_at = now() - interval '1 second' WHERE client_id = ${owner(API_KEY)} AND key = ${key}`;
    const second = await create(body, key).expect(201);
    expect(second.body.id).not.toBe(first.body.id);
    expect(second.headers['idempotent-replayed']).toBeUndefined();
    const rows = await t.sql<
      { alive: boolean }[]
    >`SELECT expires_at > now() AS alive FROM idempotency_keys WHERE client_id = ${owner(API_KEY)} AND key = ${key}`;
    expect(rows.map((r) => r.alive)).toEqual([true]);
  });

  test('when a create is recorded, then the record is kept for 24 hours by default, under the client of the key, never the key itself', async () => {
    const key = newKey();
    await create(buildNewPet(), key).expect(201);
    const [row] = await t.sql<{ owner: string; hours: number }[]>`
      SELECT client_id AS owner, round(extract(epoch FROM expires_at - created_at) / 3600)::int AS hours FROM idempotency_keys WHERE key = ${key}`;
    expect(row).toEqual({ owner: owner(API_KEY), hours: 24 });
  });

  test('when the body is invalid, then 400 and the key is not used up', async () => {
    const key = newKey();
    await create({ name: 'No category' }, key).expect(400);
    const body = buildNewPet();
    await create(body, key).expect(201);
  });

  test.each([
    ['256 characters', 'k'.repeat(256)],
    ['a tab in it', 'key\tx'],
    ['a non-ASCII character', 'clé'],
  ])('when the key has %s, then 400 names the header', async (_what, key) => {
    const body = buildNewPet();
    const res = await t.api
      .post('/v1/pets')
      .set(auth())
      .set('Idempotency-Key', Buffer.from(key, 'utf8').toString('latin1'))
      .send(body)
      .expect(400);
    expect(res.body.message).toMatch(/Idempotency-Key/i);
    expect(await petsNamed(body.name)).toEqual([]);
  });

  test('when the same key is sent many times at once, then exactly one animal is stored and every 201 carries its id', async () => {
    const key = newKey();
    const body = buildNewPet();
    const results = await Promise.all(Array.from({ length: 8 }, () => create(body, key)));
    const created = results.filter((r) => r.status === 201);
    // A request that overlaps the first gets 409 (PGlite, which serves one session, queues them instead).
    for (const r of results) expect([201, 409]).toContain(r.status);
    expect(new Set(created.map((r) => r.body.id)).size).toBe(1);
    expect(await petsNamed(body.name)).toHaveLength(1);
  });

  // Needs a second session to hold the key's lock while the request arrives; PGlite serves one.
  (process.env.TEST_DB_MODE === 'server' ? test : test.skip)(
    'when a request with the same key is still being processed, then 409, and once it is done the response is replayed',
    async () => {
      const key = newKey();
      const body = buildNewPet();
      const other = await t.sql.reserve();
      try {
        // What the first request's transaction holds while it runs.
        await other`SELECT pg_advisory_lock(hashtextextended(${owner(API_KEY)} || ':' || ${key}, 727002))`;
        const res = await create(body, key).expect(409);
        expect(res.body).toEqual({
          code: 'idempotency_key_in_use',
          message: expect.stringContaining('still being processed'),
          status: 409,
        });
        await other`SELECT pg_advisory_unlock_all()`;
      } finally {
        other.release();
      }
      const done = await create(body, key).expect(201);
      expect(await petsNamed(body.name)).toEqual([done.body]);
    },
  );

  test('when the sweep runs, then it deletes expired records and past rate-limit windows, and keeps the live ones', async () => {
    const live = newKey();
    const stale = newKey();
    await create(buildNewPet(), live).expect(201);
    await create(buildNewPet(), stale).expect(201);
    await t.sql`UPDATE idempotency_keys SET expires_at = now() - interval '1 second' WHERE key = ${stale}`;
    const now = Math.floor(Date.now() / 1000);
    await t.sql`INSERT INTO rate_limit_counts (client_id, window_start, count) VALUES ('old-window', ${now - 2 * 86_400}, 5), ('this-window', ${now}, 5)`;
    await sweepExpired(t.sql);
    expect((await t.sql<{ key: string }[]>`SELECT key FROM idempotency_keys WHERE key IN (${live}, ${stale})`).map((r) => r.key)).toEqual([
      live,
    ]);
    expect(
      (
        await t.sql<{ owner: string }[]>`SELECT client_id AS owner FROM rate_limit_counts WHERE client_id IN ('old-window', 'this-window')`
      ).map((r) => r.owner),
    ).toEqual(['this-window']);
  });
});
