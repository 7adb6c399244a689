import { IncomingMessage, type Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createHttpServer } from '../../../src/http/server';
import { API_KEY, type TestApp, startTestApp } from '../../support/harness';

// The server production runs makes each request and response with the app's prototypes from
// the start, so that express's per-request Object.setPrototypeOf finds them set (src/http/server.ts).
// That they keep fast properties is asked of a fresh server process (test/system/process/serverObjects.test.ts):
// asked here, in a jest worker whose V8 had run other test files before this one, it once answered no (in CI).
let t: TestApp;
let server: Server;
let origin: string;
const born: { request: boolean; response: boolean; instances: boolean }[] = [];
beforeAll(async () => {
  t = await startTestApp();
  server = createHttpServer(t.app, { headersTimeoutMs: 2_000, requestTimeoutMs: 5_000, keepAliveTimeoutMs: 65_000 });
  // Before express's own listener: what Node made, before express touched it.
  server.prependListener('request', (req: IncomingMessage, res: ServerResponse) => {
    born.push({
      request: Object.getPrototypeOf(req) === t.app.prototypes.request,
      response: Object.getPrototypeOf(res) === t.app.prototypes.response,
      instances: req instanceof IncomingMessage && res instanceof ServerResponse,
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  await t.close();
});

test("when the server makes a request and its response, then they are born with the app's prototypes, and are still Node's", async () => {
  born.length = 0;
  await fetch(`${origin}/v1/pets?limit=1`, { headers: { authorization: `Bearer ${API_KEY}` } });
  expect(born).toEqual([{ request: true, response: true, instances: true }]);
});

test('when requests are answered on objects born that way, then every kind of answer is whole', async () => {
  const created = await fetch(`${origin}/v1/pets`, {
    method: 'POST',
    headers: { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'Born', categoryId: 3 }),
  });
  expect(created.status).toBe(201);
  const pet = (await created.json()) as { id: number };
  expect(pet).toEqual({ id: expect.any(Number), name: 'Born', categoryId: 3, status: 'available' });

  const fetched = await fetch(`${origin}/v1/pets/${pet.id}`, { headers: { authorization: `Bearer ${API_KEY}` } });
  expect(fetched.status).toBe(200);
  expect(await fetched.json()).toEqual(pet);
  expect(fetched.headers.get('deprecation')).not.toBeNull();

  const refused = await fetch(`${origin}/v1/pets`);
  expect(refused.status).toBe(401);
  expect(refused.headers.get('www-authenticate')).toBe('Bearer realm="animal-store"');
  expect(await refused.json()).toEqual({ code: 'unauthorized', message: expect.any(String), status: 401 });

  const head = await fetch(`${origin}/v1/pets?limit=1`, { method: 'HEAD', headers: { authorization: `Bearer ${API_KEY}` } });
  expect(head.status).toBe(200);
  expect(await head.text()).toBe('');

  const page = await fetch(`${origin}/docs/`);
  expect(page.status).toBe(200);
  expect(page.headers.get('content-type')).toMatch(/^text\/html/);
});
