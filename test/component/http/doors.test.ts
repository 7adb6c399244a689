import { type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createHttpServer } from '../../../src/http/server';
import { API_KEY, type TestApp, insertPets, startTestApp, until } from '../../support/harness';
import { type RawResponse, rawHttp } from '../../support/rawHttp';

// The server production runs sends an API request straight to the request core (src/http/nodeDoor.ts);
// the app served by itself sends it through express's chain (expressDoor). Every request below goes
// to both, as bytes, and both must answer it alike, to the byte, and log it alike.
const ORIGIN = 'https://app.example';
let t: TestApp;
let own: Server;
let viaExpress: Server;
const ports = { own: 0, viaExpress: 0 };

const listening = async (server: Server): Promise<number> => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
};

beforeAll(async () => {
  t = await startTestApp({ corsOrigins: [ORIGIN], rateLimit: 'off' });
  await insertPets(
    t.sql,
    [1, 2, 3].map((i) => ({ name: `Pet ${i}`, categoryId: i, status: 'available' as const })),
  );
  own = createHttpServer(t.app, { headersTimeoutMs: 2_000, requestTimeoutMs: 5_000, keepAliveTimeoutMs: 65_000 });
  // Node's server as createHttpServer sets it up, but with the app (express) as its listener.
  viaExpress = createServer({ requireHostHeader: false }, t.app);
  viaExpress.keepAliveTimeout = 65_000;
  viaExpress.maxHeadersCount = 0;
  ports.own = await listening(own);
  ports.viaExpress = await listening(viaExpress);
});
afterAll(async () => {
  await new Promise((resolve) => own.close(resolve));
  await new Promise((resolve) => viaExpress.close(resolve));
  await t.close();
});

const KEY = `Authorization: Bearer ${API_KEY}\r\n`;
const JSON_BODY = 'Content-Type: application/json\r\n';

/** What two answers to one request may differ in: the time, and the id made for each. */
function comparable(res: RawResponse, idGiven: boolean) {
  const { date, 'x-request-id': id, ...headers } = res.headers;
  expect(date).toBeDefined();
  expect(id).toMatch(/^[A-Za-z0-9._:-]{1,128}$/);
  const kept: Record<string, string | undefined> = idGiven ? { ...headers, 'x-request-id': id } : headers;
  return { status: res.status, headers: kept, body: res.body };
}

/** The line of the request just answered (written as its response closes), without what differs between two requests (time, id, duration). */
async function lineAfter(count: number): Promise<Record<string, unknown>> {
  await until(() => t.logs().length > count, 2_000);
  const lines = t.logs();
  expect(lines).toHaveLength(count + 1);
  const line = lines[count] ?? {};
  const { time, responseTime, req, ...rest } = line;
  expect(typeof time).toBe('string');
  expect(typeof responseTime).toBe('number');
  return { ...rest, req: { ...req, id: undefined } };
}

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
  ['a probe', 'GET /livez HTTP/1.1\r\nHost: a\r\n\r\n'],
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

test.each(cases)('when %s comes to the server door and through express, then both answer and log it alike', async (_what, request) => {
  // A HEAD's answer and OPTIONS' 204 carry no body to count: they are read for a second.
  const waitMs = /^(HEAD|OPTIONS) /.test(request) ? 1_000 : 3_000;
  const send = (port: number) => rawHttp(port, [request], { waitMs, answered: true });
  const idGiven = request.includes('X-Request-Id');
  const before = t.logs().length;
  const first = await send(ports.own);
  const ownLine = await lineAfter(before);
  const second = await send(ports.viaExpress);
  const expressLine = await lineAfter(before + 1);
  expect(first.status).toBeGreaterThanOrEqual(200);
  const [a, b] = [comparable(first, idGiven), comparable(second, idGiven)];
  // /metrics changes between two reads (the first request is counted): its status and its other headers are compared.
  if (request.includes('/metrics')) {
    const withoutBody = ({ body: _body, headers: { 'content-length': _length, ...headers }, ...rest }: typeof a) => ({ ...rest, headers });
    expect(withoutBody(a)).toEqual(withoutBody(b));
  } else expect(a).toEqual(b);
  expect(ownLine).toEqual(expressLine);
  if (idGiven) expect(first.headers['x-request-id']).toBe('given-1');
});

test('when express is set to add a header of its own, then an API request through the server door never gets it, and the rest does', async () => {
  t.app.set('x-powered-by', true);
  try {
    const send = (port: number, target: string) =>
      rawHttp(port, [`GET ${target} HTTP/1.1\r\nHost: a\r\n${KEY}\r\n`], { waitMs: 3_000, answered: true });
    // The server's door: express's app.handle never ran for the API request.
    expect((await send(ports.own, '/v1/pets?limit=1')).headers['x-powered-by']).toBeUndefined();
    expect((await send(ports.own, '/elsewhere')).headers['x-powered-by']).toBe('Express');
    expect((await send(ports.viaExpress, '/v1/pets?limit=1')).headers['x-powered-by']).toBe('Express');
  } finally {
    t.app.set('x-powered-by', false);
  }
});
