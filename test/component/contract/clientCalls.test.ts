import { type DeprecationNotice, createAnimalStoreClient } from '../../../src/client';
import { clientTestbed, failure } from '../../support/clientTestbed';
import { API_KEY, buildNewPet, issueKey } from '../../support/harness';
import type { HttpFaultProxy } from '../../support/httpFaults';

// What each call sends and what it gives back: one Idempotency-Key per create, no retry of what
// cannot be repeated or would fail again, typed errors with the headers that matter, deprecations.
const testbed = clientTestbed();
const { clientWith } = testbed;

const keysSent = (proxy: HttpFaultProxy) => proxy.seen.map((s) => s.headers['idempotency-key']);

describe('creates', () => {
  test('when a create is retried, then every attempt carries the one key it generated, and the caller learns it was replayed', async () => {
    const { proxy, store } = await clientWith(['answer-503', 'cut-after-answer']);
    const created = await store.createPet(buildNewPet({ name: 'Keyed' }));
    const keys = keysSent(proxy);
    expect(keys).toHaveLength(3);
    expect(new Set(keys)).toEqual(new Set([created.idempotencyKey]));
    expect(created.idempotencyKey).toMatch(/^[0-9a-f]{32}$/);
    // The second attempt made the animal and its answer was lost; the third got it replayed.
    expect(created).toMatchObject({ replayed: true, meta: { attempts: 3 }, pet: { name: 'Keyed' } });
    const [row] = await testbed.app().sql`SELECT count(*)::int AS n FROM pets WHERE name = 'Keyed'`;
    expect(row).toEqual({ n: 1 });
  });

  test('when two creates are made, then each has a key of its own; a caller-given key is sent as given', async () => {
    const { proxy, store } = await clientWith([]);
    const first = await store.createPet(buildNewPet());
    const second = await store.createPet(buildNewPet());
    const mine = await store.createPet(buildNewPet(), { idempotencyKey: 'order-4711' });
    expect(first.idempotencyKey).not.toBe(second.idempotencyKey);
    expect(keysSent(proxy)).toEqual([first.idempotencyKey, second.idempotencyKey, 'order-4711']);
    expect([first.replayed, second.replayed, mine.replayed]).toEqual([false, false, false]);
  });

  test('when a keyed create meets 409 (its first attempt still in progress), then it asks again and gets the animal', async () => {
    const { proxy, store } = await clientWith(['answer-409']);
    const created = await store.createPet(buildNewPet());
    expect(created.meta.attempts).toBe(2);
    expect(proxy.forwarded()).toBe(1);
  });

  test('when every attempt of a create is lost, then its error carries the key, and a create with that key tells what became of it', async () => {
    const { store } = await clientWith([], 'cut-after-answer', { retry: { maxAttempts: 2 } });
    const body = buildNewPet({ name: 'Lost answer' });
    const err = await failure(store.createPet(body));
    expect(err).toMatchObject({ code: 'network_error', meta: { attempts: 2 }, idempotencyKey: expect.stringMatching(/^[0-9a-f]{32}$/) });
    const { store: later } = await clientWith([]);
    const found = await later.createPet(body, { idempotencyKey: err.idempotencyKey });
    expect(found).toMatchObject({ replayed: true, pet: { name: 'Lost answer' } });
    const [row] = await testbed.app().sql`SELECT count(*)::int AS n FROM pets WHERE name = 'Lost answer'`;
    expect(row).toEqual({ n: 1 });
  });

  test('when a create without a key (the openapi-fetch POST) loses its answer, then it is not retried; after a 503 it is', async () => {
    const { proxy, store } = await clientWith(['cut-after-answer']);
    await expect(store.POST('/pets', { body: buildNewPet() })).rejects.toMatchObject({ code: 'network_error', meta: { attempts: 1 } });
    expect(proxy.seen).toHaveLength(1);
    const { proxy: refusing, store: again } = await clientWith(['answer-503', 'answer-429']);
    const answer = await again.POST('/pets', { body: buildNewPet() });
    expect(answer.response.status).toBe(201);
    expect(refusing.seen).toHaveLength(3);
  });
});

describe('what is never retried', () => {
  test.each<[string, number, string, (store: ReturnType<typeof createAnimalStoreClient>) => Promise<unknown>]>([
    ['a limit out of bounds', 400, 'validation_failed', (s) => s.listPets({ limit: 0 })],
    ['an unknown animal', 404, 'not_found', (s) => s.getPet(9007199254740991)],
    ['a key reused with another body', 422, 'idempotency_key_reused', (s) => s.createPet(buildNewPet(), { idempotencyKey: 'reused-key' })],
  ])('when the answer is %s (%i), then the call is attempted once', async (_what, status, code, call) => {
    const { store: setup } = await clientWith([]);
    await setup.createPet(buildNewPet(), { idempotencyKey: 'reused-key' }).catch(() => undefined);
    const { proxy, store } = await clientWith([]);
    expect(await failure(call(store))).toMatchObject({ status, code, body: { status, code }, meta: { attempts: 1 } });
    expect(proxy.seen).toHaveLength(1);
  });

  test('when the key is unknown (401) or lacks a scope (403), then the call is attempted once and the error says so', async () => {
    const { proxy, store } = await clientWith([], 'forward', { apiKey: 'not-a-valid-key-000000' });
    expect(await failure(store.listPets())).toMatchObject({ status: 401, code: 'unauthorized', meta: { attempts: 1 } });
    const reader = await issueKey(testbed.app(), { scopes: ['pets:read'] });
    const { proxy: second, store: readOnly } = await clientWith([], 'forward', { apiKey: reader.key });
    const denied = await failure(readOnly.createPet(buildNewPet()));
    expect(denied).toMatchObject({ status: 403, code: 'insufficient_scope', meta: { attempts: 1 } });
    expect(denied.message).toMatch(/pets:write/);
    expect([proxy.seen.length, second.seen.length]).toEqual([1, 1]);
  });

  test('when a read is answered 409, then it is not retried (only a keyed create waits out its first attempt)', async () => {
    const { proxy, store } = await clientWith([], 'answer-409');
    expect(await failure(store.listPets())).toMatchObject({ status: 409, meta: { attempts: 1 } });
    expect(proxy.seen).toHaveLength(1);
  });
});

describe('what an answer tells the caller', () => {
  test('when a key expires, then each answer and error carries the expiry, the request id and the rate limit', async () => {
    const expiring = await issueKey(testbed.app(), { expiresInSeconds: 3_600 });
    const { store } = await clientWith([], 'forward', { apiKey: expiring.key });
    const page = await store.listPets({ limit: 1 });
    expect(page.meta).toEqual({
      attempts: 1,
      requestId: expect.any(String),
      rateLimit: expect.stringMatching(/^"per-key";r=\d+;t=\d+$/),
      rateLimitPolicy: expect.any(String),
      apiKeyExpiration: expect.any(Date),
    });
    expect(Math.abs(page.meta.apiKeyExpiration!.getTime() - (Date.now() + 3_600_000))).toBeLessThan(5_000);
    const err = await failure(store.getPet(9007199254740991));
    expect(err.meta).toMatchObject({ requestId: expect.any(String), apiKeyExpiration: page.meta.apiKeyExpiration });
  });

  test('when an answer is not an Error body (a load balancer page), then the error says unexpected_response with its status', async () => {
    const { proxy, store } = await clientWith([], 'answer-502', { retry: { maxAttempts: 2 } });
    const err = await failure(store.listPets());
    expect(err).toMatchObject({ status: 502, code: 'unexpected_response', meta: { attempts: 2 } });
    expect(err.body).toBeUndefined();
    expect(proxy.seen).toHaveLength(2);
  });

  test('when getPet answers, then onDeprecation gets its dates and successor; by default one warning per operation', async () => {
    const [pet] = await testbed.app().sql<{ id: number }[]>`INSERT INTO pets (name, category_id) VALUES ('Old', 1) RETURNING id`;
    const notices: DeprecationNotice[] = [];
    const store = createAnimalStoreClient({ baseUrl: `${testbed.origin()}/v1`, apiKey: API_KEY, onDeprecation: (n) => notices.push(n) });
    await store.getPet(pet!.id);
    await failure(store.getPet(9007199254740991));
    expect(notices).toHaveLength(2);
    expect(notices[0]).toEqual({
      operation: 'GET /pets/{petId}',
      deprecation: expect.any(Date),
      sunset: new Date('2030-12-05T00:00:00Z'),
      successor: `${testbed.origin()}/v1/pets`,
      // rel="deprecation" (RFC 9745 §3): getPet's entry on the reference page.
      documentation: `${testbed.origin()}/docs/#/animals/getPet`,
    });
    await store.listPets();
    expect(notices).toHaveLength(2);

    const warnings = jest.spyOn(console, 'warn').mockImplementation(() => undefined);
    try {
      const plain = createAnimalStoreClient({ baseUrl: `${testbed.origin()}/v1`, apiKey: API_KEY });
      await plain.getPet(pet!.id);
      await plain.getPet(pet!.id);
      await createAnimalStoreClient({ baseUrl: `${testbed.origin()}/v1`, apiKey: API_KEY }).getPet(pet!.id);
      expect(warnings.mock.calls).toEqual([
        [`Animal Store API: GET /pets/{petId} is deprecated; it stops being served on 2030-12-05; use ${testbed.origin()}/v1/pets instead`],
      ]);
    } finally {
      warnings.mockRestore();
    }
  });
});

describe('conditional reads', () => {
  test('when an animal or a page is read again with its etag, then the client says unchanged (304: one attempt, nothing parsed); once changed, it reads it', async () => {
    const { proxy, store } = await clientWith([]);
    const { pet } = await store.createPet(buildNewPet({ name: 'Polled', categoryId: 41 }));
    const first = await store.getPet(pet.id);
    expect(first).toMatchObject({ unchanged: false, pet, etag: expect.stringMatching(/^"[A-Za-z0-9_-]{22}"$/) });
    const again = await store.getPet(pet.id, { ifNoneMatch: first.etag as string });
    expect(again).toEqual({ unchanged: true, etag: first.etag, meta: expect.objectContaining({ attempts: 1 }) });
    expect(proxy.seen.at(-1)?.headers['if-none-match']).toBe(first.etag);

    const page = await store.listPets({ categoryId: 41 });
    expect(page).toMatchObject({ unchanged: false, pets: [pet], next: undefined });
    expect((await store.listPets({ categoryId: 41 }, { ifNoneMatch: page.etag as string })).unchanged).toBe(true);

    await testbed.app().sql`UPDATE pets SET status = 'sold' WHERE id = ${pet.id}`;
    const changed = await store.getPet(pet.id, { ifNoneMatch: first.etag as string });
    expect(changed.unchanged).toBe(false);
    if (!changed.unchanged) expect(changed.pet.status).toBe('sold');
    const newPage = await store.listPets({ categoryId: 41 }, { ifNoneMatch: page.etag as string });
    expect(newPage.unchanged ? undefined : newPage.pets.map((p) => p.status)).toEqual(['sold']);
  });
});
