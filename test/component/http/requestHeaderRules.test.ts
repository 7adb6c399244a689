import { API_KEY, badRequest, productionServerForFile, testAppForFile } from '../../support/harness';
import { rawHttp } from '../../support/rawHttp';

// Header rules a client library would never break, sent as bytes through the server production
// runs: a credential repeated anywhere in the header block, and Host missing, repeated or invalid.
const t = testAppForFile();
const server = productionServerForFile(() => t.app);

const KEY = `Authorization: Bearer ${API_KEY}\r\n`;
const get = (headers: string, version = '1.1') =>
  rawHttp(server.port, [`GET /v1/pets?limit=1 HTTP/${version}\r\n${headers}\r\n`], { waitMs: 3_000, answered: true });

describe('a repeated Authorization is refused wherever it stands', () => {
  test.each([
    ['next to the first', `Host: a\r\n${KEY}${KEY}`],
    ['after 2,100 other header lines', `Host: a\r\n${KEY}${'a:1\r\n'.repeat(2_100)}${KEY}`],
    [
      'after 2,100 lines, with another key',
      `Host: a\r\n${KEY}${'a:1\r\n'.repeat(2_100)}Authorization: Bearer other-key-0123456789abcdef\r\n`,
    ],
  ])('when Authorization comes twice, %s, then 401', async (_where, headers) => {
    const res = await get(headers);
    expect(res.status).toBe(401);
    expect(JSON.parse(res.body)).toMatchObject({ code: 'unauthorized', message: expect.stringContaining('single'), status: 401 });
  });

  test('when a single Authorization comes after 2,100 other header lines, then it is read', async () => {
    expect((await get(`Host: a\r\n${'a:1\r\n'.repeat(2_100)}${KEY}`)).status).toBe(200);
  });
});

describe('Host (RFC 9112 §3.2)', () => {
  test.each([
    ['missing on HTTP/1.1', KEY, 'An HTTP/1.1 request must have a Host header'],
    ['repeated', `Host: a\r\nHost: b\r\n${KEY}`, 'The request has more than one Host header'],
    ['repeated, the same', `Host: a\r\n${KEY}Host: a\r\n`, 'The request has more than one Host header'],
    ['with a space in it', `Host: a b\r\n${KEY}`, 'The Host header is not a valid host[:port]'],
    ['with a path', `Host: a/b\r\n${KEY}`, 'The Host header is not a valid host[:port]'],
    ['with user info', `Host: user@a\r\n${KEY}`, 'The Host header is not a valid host[:port]'],
    ['with two ports', `Host: a:1:2\r\n${KEY}`, 'The Host header is not a valid host[:port]'],
    ['with a broken percent-encoding', `Host: a%zz\r\n${KEY}`, 'The Host header is not a valid host[:port]'],
  ])('when Host is %s, then 400 bad_request with the Error body, nosniff, and the connection closed', async (_what, headers, message) => {
    const res = await get(headers);
    expect(res.status).toBe(400);
    const sentence = `${message} (RFC 9112 §3.2)`;
    expect(JSON.parse(res.body)).toEqual(badRequest('bad_request', sentence, [['header', 'Host', 'host']], [sentence]));
    expect(res.headers).toMatchObject({
      'content-type': 'application/json; charset=utf-8',
      'x-content-type-options': 'nosniff',
      connection: 'close',
    });
    expect(res.closedAfterMs).toBeDefined();
  });

  test.each([
    ['a name', 'api.animal-store.example'],
    ['a name and a port', 'api.animal-store.example:443'],
    ['an IPv4 address and a port', '127.0.0.1:3000'],
    ['an IPv6 literal and a port', '[::1]:3000'],
    ['empty (RFC 9112 allows it)', ''],
  ])('when Host is %s, then the request is served', async (_what, host) => {
    expect((await get(`Host: ${host}\r\n${KEY}`)).status).toBe(200);
  });

  test('when an HTTP/1.0 request has no Host, then it is served', async () => {
    expect((await get(KEY, '1.0')).status).toBe(200);
  });
});
