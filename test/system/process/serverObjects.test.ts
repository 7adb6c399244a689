import path from 'node:path';
import { type TestDatabase, freshDatabase } from '../../support/databases';
import { FROM_SOURCE, reapAll, startServer, stop, untilReady } from '../../support/processes';

// The server process makes each request and response with express's prototypes from the start, so
// that they keep fast properties (src/http/server.ts, `bornWith`). Asked of the real process, fresh,
// as production starts it: V8's answer depends on what the process ran before (an object's shape is
// the isolate's), so it is asked where nothing but the server has run. test/support/bornFast.cjs is
// preloaded with V8's natives syntax and writes one line per request the server makes.

afterAll(reapAll);

interface Born {
  url: string;
  ownPrototypes: boolean;
  instances: boolean;
  fast: { request: boolean; response: boolean };
}
const bornLines = (output: string): Born[] =>
  output
    .split('\n')
    .filter((line) => line.startsWith('born-with '))
    .map((line) => JSON.parse(line.slice('born-with '.length)) as Born);

describe('the requests and responses of the server process', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await freshDatabase();
  });
  afterAll(() => db.drop());

  test('when it answers every kind of request, many times over, then each request and response it made was born with fast properties', async () => {
    const key = 'born-fast-key-0123456789abcdef';
    const [node, ...rest] = FROM_SOURCE as [string, ...string[]];
    const server = await startServer(
      {
        DATABASE_URL: db.url,
        API_KEYS: key,
        ...(process.env.TEST_DB_MODE === 'embedded' ? { ON_UNSAFE_DATABASE: 'warn' } : {}),
      },
      [node, '--allow-natives-syntax', '-r', path.join(__dirname, '../../support/bornFast.cjs'), ...rest],
    );
    try {
      await untilReady(server);
      const auth = { authorization: `Bearer ${key}` };
      const asked: string[] = [];
      // A request, its path and query noted, its body read whole.
      const ask = async (url: string, init: RequestInit = {}) => {
        asked.push(new URL(url).pathname + new URL(url).search);
        const res = await fetch(url, init);
        return { status: res.status, text: await res.text() };
      };
      // Past V8's slack tracking (its first seven objects of a shape), and every kind of answer.
      for (let round = 0; round < 10; round++) {
        const created = await ask(`${server.baseUrl}/pets`, {
          method: 'POST',
          headers: { ...auth, 'content-type': 'application/json' },
          body: JSON.stringify({ name: `Born ${round}`, categoryId: 3 }),
        });
        expect(created.status).toBe(201);
        const { id } = JSON.parse(created.text) as { id: number };
        expect((await ask(`${server.baseUrl}/pets?limit=5&status=available`, { headers: auth })).status).toBe(200);
        expect((await ask(`${server.baseUrl}/pets/${id}`, { headers: auth })).status).toBe(200);
        expect((await ask(`${server.baseUrl}/pets?limit=0`, { headers: auth })).status).toBe(400);
        expect((await ask(`${server.baseUrl}/pets`)).status).toBe(401);
        expect((await ask(`${server.baseUrl}/pets?limit=1`, { method: 'HEAD', headers: auth })).status).toBe(200);
      }
      const born = bornLines(server.output()).filter((b) => b.url.startsWith('/v1/'));
      // One line for each request asked (the readiness probes are not the API's, and are left out).
      expect(born.map((b) => b.url)).toEqual(asked);
      const wrong = born.filter((b) => !(b.ownPrototypes && b.instances && b.fast.request && b.fast.response));
      expect(wrong).toEqual([]);
    } finally {
      expect(await stop(server)).toBe(0);
    }
  });
});
