import { API_KEY, insertPets, productionServerForFile, testAppForFile, until } from '../../support/harness';
import { rawHttp } from '../../support/rawHttp';

// The server's one listener (src/http/listener.ts) gives every request, whether the request core
// answers it or express's routes do, its id, nosniff, the Host rule and one log line. Every request
// below goes to the server as bytes; its answer and its line must say the same request. What
// express's routes learn reaches the line too (mcp.test.ts: the tools an /mcp request called).
const ORIGIN = 'https://app.example';
const t = testAppForFile({ corsOrigins: [ORIGIN], rateLimit: 'off' });
const server = productionServerForFile(() => t.app);
beforeAll(() =>
  insertPets(
    t.sql,
    [1, 2, 3].map((i) => ({ name: `Pet ${i}`, categoryId: i, status: 'available' as const })),
  ),
);

const KEY = `Authorization: Bearer ${API_KEY}\r\n`;
const JSON_BODY = 'Content-Type: application/json\r\n';

const cases: [string, string][] = [
  ['a page', `GET /v1/pets?limit=2 HTTP/1.1\r\nHost: a\r\n${KEY}\r\n`],
  ['a page, its id given', `GET /v1/pets?limit=2 HTTP/1.1\r\nHost: a\r\nX-Request-Id: given-1\r\n${KEY}\r\n`],
  ['a page, HEAD', `HEAD /v1/pets?limit=2 HTTP/1.1\r\nHost: a\r\n${KEY}\r\n`],
  ['a page, absolute-form', `GET http://a/v1/pets?limit=1 HTTP/1.1\r\nHost: a\r\n${KEY}\r\n`],
  ['no key', 'GET /v1/pets HTTP/1.1\r\nHost: a\r\n\r\n'],
  ['a limit out of bounds', `GET /v1/pets?limit=0 HTTP/1.1\r\nHost: a\r\n${KEY}\r\n`],
  ['an unknown animal', `GET /v1/pets/999999 HTTP/1.1\r\nHost: a\r\n${KEY}\r\n`],
  ['a create without a name', `POST /v1/pets HTTP/1.1\r\nHost: a\r\n${KEY}${JSON_BODY}Content-Length: 2\r\n\r\n{}`],
  ['a create as text', `POST /v1/pets HTTP/1.1\r\nHost: a\r\n${KEY}Content-Type: text/plain\r\nContent-Length: 2\r\n\r\nhi`],
  ['a create over the limit', `POST /v1/pets HTTP/1.1\r\nHost: a\r\n${KEY}${JSON_BODY}Content-Length: 20000\r\n\r\n{`],
  ['a method the path lacks', `DELETE /v1/pets HTTP/1.1\r\nHost: a\r\n${KEY}\r\n`],
  ['OPTIONS without an origin', 'OPTIONS /v1/pets HTTP/1.1\r\nHost: a\r\n\r\n'],
  ['a path under the root with no route', `GET /v1/nothing HTTP/1.1\r\nHost: a\r\n${KEY}\r\n`],
  ['a probe', 'GET /healthz HTTP/1.1\r\nHost: a\r\n\r\n'],
  [
    'a preflight from a listed origin',
    `OPTIONS /v1/pets HTTP/1.1\r\nHost: a\r\nOrigin: ${ORIGIN}\r\nAccess-Control-Request-Method: POST\r\n\r\n`,
  ],
  ['a page from a listed origin', `GET /v1/pets?limit=1 HTTP/1.1\r\nHost: a\r\nOrigin: ${ORIGIN}\r\n${KEY}\r\n`],
  ['a page from another origin', `GET /v1/pets?limit=1 HTTP/1.1\r\nHost: a\r\nOrigin: https://other.example\r\n${KEY}\r\n`],
  ['two Host headers', `GET /v1/pets HTTP/1.1\r\nHost: a\r\nHost: b\r\n${KEY}\r\n`],
  ['no Host', `GET /v1/pets HTTP/1.1\r\n${KEY}\r\n`],
  ['an invalid Host', `GET /v1/pets HTTP/1.1\r\nHost: a b\r\n${KEY}\r\n`],
  ['the metrics (express serves them)', 'GET /metrics HTTP/1.1\r\nHost: a\r\n\r\n'],
  ['a path outside the root', 'GET /elsewhere HTTP/1.1\r\nHost: a\r\n\r\n'],
];

/** What each case is answered with, and what its line names: the operation, or the route outside the contract. */
const expected: Record<string, { status: number; operationId?: string }> = {
  'a page': { status: 200, operationId: 'listPets' },
  'a page, its id given': { status: 200, operationId: 'listPets' },
  'a page, HEAD': { status: 200, operationId: 'listPets' },
  'a page, absolute-form': { status: 200, operationId: 'listPets' },
  'no key': { status: 401, operationId: 'listPets' },
  'a limit out of bounds': { status: 400, operationId: 'listPets' },
  'an unknown animal': { status: 404, operationId: 'getPet' },
  'a create without a name': { status: 400, operationId: 'createPet' },
  'a create as text': { status: 415, operationId: 'createPet' },
  'a create over the limit': { status: 413, operationId: 'createPet' },
  'a method the path lacks': { status: 405 },
  'OPTIONS without an origin': { status: 204 },
  'a path under the root with no route': { status: 404 },
  'a probe': { status: 200, operationId: 'getHealth' },
  'a preflight from a listed origin': { status: 204 },
  'a page from a listed origin': { status: 200, operationId: 'listPets' },
  'a page from another origin': { status: 200, operationId: 'listPets' },
  'two Host headers': { status: 400 },
  'no Host': { status: 400 },
  'an invalid Host': { status: 400 },
  'the metrics (express serves them)': { status: 200 },
  'a path outside the root': { status: 404 },
};

test.each(cases)(
  'when %s comes to the server, then its answer carries its id and nosniff, and its one line says the same request',
  async (what, request) => {
    // A HEAD's answer and OPTIONS' 204 carry no body to count: they are read for a second.
    const waitMs = /^(HEAD|OPTIONS) /.test(request) ? 1_000 : 3_000;
    // A request's line is one that names a request: the app's background work (the managed keys'
    // refresh, which warns when a slow database misses its deadline) writes lines of its own.
    const before = t.logs().length;
    const requestLines = () =>
      t
        .logs()
        .slice(before)
        .filter((l) => l.req !== undefined);
    const answer = await rawHttp(server.port, [request], { waitMs, answered: true });
    await until(() => requestLines().length > 0, 2_000);
    const lines = requestLines();
    expect(lines).toHaveLength(1);
    const [line] = lines as [
      Record<string, { id?: string; path?: string; method?: string; statusCode?: number } & Record<string, unknown>>,
    ];
    const want = expected[what] ?? { status: -1 };
    expect(answer.status).toBe(want.status);
    expect(answer.headers['x-content-type-options']).toBe('nosniff');
    expect(answer.headers['x-request-id']).toMatch(request.includes('X-Request-Id') ? /^given-1$/ : /^[A-Za-z0-9._:-]{1,128}$/);
    expect(line.req?.id).toBe(answer.headers['x-request-id']);
    expect(line.req?.method).toBe(request.split(' ')[0]);
    expect(line.res?.statusCode).toBe(answer.status);
    expect(line.operationId).toBe(want.operationId);
    if (want.status === 401) expect(line.apiKey).toBeUndefined();
    else if (want.operationId === 'listPets' || want.operationId === 'createPet') expect(line.apiKey).toMatch(/^env:/);
  },
);
