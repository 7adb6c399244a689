import {
  type AnimalStoreClient,
  AnimalStoreError,
  type DeprecationNotice,
  createAnimalStoreClient,
  nextLink,
  walkPets,
} from '../../../src/client';
import { API_KEY, type Pet, type TestApp, insertPets, listenOnLoopback, startTestApp } from '../../support/harness';

// The published client against the real server. The type check runs over this file too:
// a contract change that breaks these calls fails `npm run contract`.
let t: TestApp;
let server: Awaited<ReturnType<typeof listenOnLoopback>>;
let store: AnimalStoreClient;
let baseUrl: string;
const notices: DeprecationNotice[] = [];
beforeAll(async () => {
  t = await startTestApp();
  server = await listenOnLoopback(t.app);
  baseUrl = `${server.origin}${t.spec.apiRoot}`;
  store = createAnimalStoreClient({ baseUrl, apiKey: API_KEY, onDeprecation: (notice) => notices.push(notice) });
});
afterAll(async () => {
  await server.close();
  await t.close();
});

describe('the typed client (openapi-fetch over generated/)', () => {
  test('when the typed client creates, lists and fetches animals, then it gets typed bodies', async () => {
    const created = await store.POST('/pets', { body: { name: 'Client', categoryId: 4, status: 'pending' } });
    expect(created.response.status).toBe(201);
    const pet = created.data;
    expect(pet).toEqual({ id: expect.any(Number), name: 'Client', categoryId: 4, status: 'pending' });
    if (!pet) throw new Error('no pet');

    const listed = await store.GET('/pets', { params: { query: { status: 'pending', limit: 100 } } });
    expect(listed.data).toContainEqual(pet);

    const fetched = await store.GET('/pets/{petId}', { params: { path: { petId: pet.id } } });
    expect(fetched.data).toEqual(pet);
    expect(fetched.response.headers.get('sunset')).toBe('Thu, 05 Dec 2030 00:00:00 GMT');
    // The openapi-fetch methods report deprecations as the operations do.
    expect(notices.map((n) => n.operation)).toEqual(['GET /pets/{petId}']);
  });

  test('when a call fails, then the client gets the typed Error body', async () => {
    const missing = await store.GET('/pets/{petId}', { params: { path: { petId: 9007199254740991 } } });
    expect(missing.error).toEqual({ code: 'not_found', message: 'No animal has id 9007199254740991', status: 404 });

    const anonymous = createAnimalStoreClient({ baseUrl, apiKey: 'not-a-valid-key-000000' });
    const denied = await anonymous.GET('/pets');
    expect(denied.error?.code).toBe('unauthorized');
  });

  test('when code calls the client as the contract does not allow, then the compiler refuses it', async () => {
    // @ts-expect-error categoryId is an integer in the spec
    const wrongType = await store.POST('/pets', { body: { name: 'Typed', categoryId: 'seven' } });
    expect(wrongType.error?.code).toBe('validation_failed');
    // @ts-expect-error name is required in the spec
    const missingField = await store.POST('/pets', { body: { categoryId: 7 } });
    expect(missingField.error?.message).toBe("body property 'name' is required");
    // @ts-expect-error the spec has no DELETE /pets/{petId}
    const notAnOperation = await store.DELETE('/pets/{petId}', { params: { path: { petId: 1 } } });
    expect(notAnOperation.response.status).toBe(405);
  });

  test('when walkPets iterates a filter, then it follows every rel="next" and yields every animal of it once, in id order', async () => {
    await t.sql`TRUNCATE pets RESTART IDENTITY`;
    const pets = await insertPets(
      t.sql,
      Array.from({ length: 53 }, (_, i) => ({ name: `Walked ${i}`, categoryId: i, status: i % 2 ? 'sold' : 'pending' }) as const),
    );
    const requested: string[] = [];
    const counting = createAnimalStoreClient({
      baseUrl,
      apiKey: API_KEY,
      fetch: (input: Request | URL | string) => {
        const request = input as Request;
        requested.push(new URL(request.url).search);
        return fetch(request);
      },
    });
    const sold: Pet[] = [];
    for await (const pet of walkPets(counting, { status: 'sold', limit: 5 })) {
      // The type says what the contract says: status is always there.
      const status: Pet['status'] = pet.status;
      expect(status).toBe('sold');
      sold.push(pet);
    }
    expect(sold).toEqual(pets.filter((p) => p.status === 'sold'));
    // 26 animals at 5 a page: 6 pages, the first without a cursor, each next one from the link.
    expect(requested).toHaveLength(6);
    expect(requested[0]).toBe('?status=sold&limit=5');
    expect(requested.slice(1).every((q) => /^\?limit=5&status=sold&cursor=[A-Za-z0-9_-]+$/.test(q))).toBe(true);

    const all: number[] = [];
    for await (const pet of walkPets(store)) all.push(pet.id);
    expect(all).toEqual(pets.map((p) => p.id));
  });

  test('when a page fails, then walkPets throws the Error body', async () => {
    const anonymous = createAnimalStoreClient({ baseUrl, apiKey: 'not-a-valid-key-000000' });
    const walking = walkPets(anonymous).next();
    await expect(walking).rejects.toBeInstanceOf(AnimalStoreError);
    await expect(walking).rejects.toMatchObject({ body: { code: 'unauthorized', status: 401 } });
  });

  test.each([
    ['</v1/pets?limit=2&cursor=abc>; rel="next"', 'https://api.example/v1/pets?limit=2&cursor=abc'],
    ['<https://other.example/v1/pets?cursor=x>; rel=next', 'https://other.example/v1/pets?cursor=x'],
    ['</v1/pets?cursor=p>; rel="prev", </v1/pets?cursor=n>; rel="next"', 'https://api.example/v1/pets?cursor=n'],
    ['</v1/pets?cursor=n>; title="a; b"; rel="last next"', 'https://api.example/v1/pets?cursor=n'],
    ['<?cursor=q>; REL="Next"', 'https://api.example/v1/pets?cursor=q'],
    ['</v1/pets>; rel="successor-version"', undefined],
    ['</v1/pets?cursor=n>; rel="nextpage"', undefined],
    ['', undefined],
  ])('when Link is %j, then its rel="next" target is %s', (header, expected) => {
    expect(nextLink(header, 'https://api.example/v1/pets?limit=2')?.href).toBe(expected);
  });
});
