import { type AnimalStoreClient, createAnimalStoreClient } from '../src/client';
import { API_KEY, type TestApp, listenOnLoopback, startTestApp } from './support/harness';

// The published client against the real server. The type check runs over this file too:
// a contract change that breaks these calls fails `npm run contract`.
let t: TestApp;
let server: Awaited<ReturnType<typeof listenOnLoopback>>;
let store: AnimalStoreClient;
let baseUrl: string;
beforeAll(async () => {
  t = await startTestApp();
  server = await listenOnLoopback(t.app);
  baseUrl = `${server.origin}${t.spec.apiRoot}`;
  store = createAnimalStoreClient({ baseUrl, apiKey: API_KEY });
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
});
