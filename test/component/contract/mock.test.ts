import { createApp } from '../../../src/app';
import { type Spec, loadSpec } from '../../../src/contract/spec';
import { createMockHandlers } from '../../../src/handlers/mock';
import { ContractChecker } from '../../../src/contract/contractChecker';
import { API_KEY, type ApiClient, auth, captureLogs, contractClient } from '../../support/harness';

// npm run mock: the app with the mock's handler map, with no database at all.
let spec: Spec;
let doc: Record<string, any>;
let api: ApiClient;
beforeAll(async () => {
  spec = await loadSpec();
  doc = spec.document;
  const app = await createApp({
    spec,
    handlers: await createMockHandlers(spec),
    bootstrapKeys: [API_KEY],
    logging: captureLogs('silent').logging,
  });
  api = contractClient(app, await ContractChecker.create(spec));
});

const example = (path: string, method: string, status: string) =>
  doc.paths[path][method].responses[status].content['application/json'].example;

describe('mock mode (npm run mock)', () => {
  test.each([
    ['listPets', 'get', '/v1/pets', '/pets', 200],
    ['getPet', 'get', '/v1/pets/7', '/pets/{petId}', 200],
  ] as const)(
    'when %s is called, then the mock answers with the example of its success response',
    async (_id, method, url, path, status) => {
      const res = await api[method](url).set(auth()).expect(status);
      expect(res.body).toEqual(example(path, method, String(status)));
    },
  );

  test('when createPet is called, then the mock validates the body and answers 201 with its example', async () => {
    const res = await api.post('/v1/pets').set(auth()).send({ name: 'Anything', categoryId: 3 }).expect(201);
    expect(res.body).toEqual(example('/pets', 'post', '201'));
    await api.post('/v1/pets').set(auth()).send({ name: 'No category' }).expect(400);
  });

  test('when Prefer: code=404 is sent, then the mock gives the documented 404 example', async () => {
    const res = await api.get('/v1/pets/7').set(auth()).set('Prefer', 'code=404').expect(404);
    expect(res.body).toEqual(example('/pets/{petId}', 'get', '404'));
  });

  test('when a key is missing or input is invalid, then the mock answers as the service does', async () => {
    await api.get('/v1/pets').expect(401);
    await api.get('/v1/pets?limit=101').set(auth()).expect(400);
  });

  test('when a client walks listPets, then the first page carries the documented Link rel="next" and the page it leads to none', async () => {
    const linkExample = doc.components.headers.NextPageLink.example as string;
    const first = await api.get('/v1/pets').set(auth()).expect(200);
    expect(first.headers.link).toBe(linkExample);
    const next = /^<([^>]+)>; rel="next"$/.exec(linkExample)?.[1] as string;
    const second = await api.get(next).set(auth()).expect(200);
    expect(second.body).toEqual(example('/pets', 'get', '200'));
    expect(second.headers.link).toBeUndefined();
  });
});
