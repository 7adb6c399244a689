import { createConnection } from 'node:net';
import { API_KEY, OTHER_API_KEY, auth, listenOnLoopback, testAppForFile } from '../../support/harness';

const t = testAppForFile();

describe('authentication (bearer API keys)', () => {
  const operations = [
    ['listPets', 'get', '/v1/pets'],
    ['createPet', 'post', '/v1/pets'],
    ['getPet', 'get', '/v1/pets/1'],
    ['an unknown path under /v1', 'get', '/v1/nothing'],
    ['a method the path does not allow', 'delete', '/v1/pets'],
    ['broken percent-encoding', 'get', '/v1/pets/%E0%A4%A'],
  ] as const;

  describe.each(operations)('%s', (_name, method, path) => {
    test.each([
      ['no Authorization header', undefined, 'Missing API key', 'Bearer realm="animal-store"'],
      ['an empty header', '', 'Missing API key', 'Bearer realm="animal-store"'],
      ['an unknown key', 'Bearer not-a-valid-key-123456', 'Invalid API key', 'Bearer realm="animal-store", error="invalid_token"'],
      [
        'a key for another scheme',
        `Basic ${API_KEY}`,
        'Malformed Authorization header',
        'Bearer realm="animal-store", error="invalid_token"',
      ],
      ['the scheme without a key', 'Bearer', 'Malformed Authorization header', 'Bearer realm="animal-store", error="invalid_token"'],
      ['the key without a scheme', API_KEY, 'Malformed Authorization header', 'Bearer realm="animal-store", error="invalid_token"'],
      [
        'a key with a space in it',
        `Bearer ${API_KEY} x`,
        'Malformed Authorization header',
        'Bearer realm="animal-store", error="invalid_token"',
      ],
      [
        'a key with characters outside the token grammar',
        'Bearer abc"def',
        'Malformed Authorization header',
        'Bearer realm="animal-store", error="invalid_token"',
      ],
      [
        'a prefix of a valid key',
        `Bearer ${API_KEY.slice(0, -1)}`,
        'Invalid API key',
        'Bearer realm="animal-store", error="invalid_token"',
      ],
      [
        'a valid key with one more character',
        `Bearer ${API_KEY}x`,
        'Invalid API key',
        'Bearer realm="animal-store", error="invalid_token"',
      ],
    ])('when the request has %s, then 401 with a Bearer challenge', async (_what, header, message, challenge) => {
      const req = t.api[method](path);
      if (header !== undefined) req.set('Authorization', header);
      const res = await req.expect(401);
      expect(res.body).toEqual({ code: 'unauthorized', message: expect.stringContaining(message), status: 401 });
      expect(res.headers['www-authenticate']).toBe(challenge);
    });
  });

  test.each([['Bearer'], ['bearer'], ['BEARER'], ['bEaReR']])(
    'when the scheme word is written %s, then the key is accepted',
    async (scheme) => {
      await t.api.get('/v1/pets').set('Authorization', `${scheme} ${API_KEY}`).expect(200);
    },
  );

  test('when any of the configured keys is sent, then it is accepted', async () => {
    await t.api.get('/v1/pets').set(auth(OTHER_API_KEY)).expect(200);
  });

  test('when two Authorization headers are sent, then 401, even if one is valid', async () => {
    const server = await listenOnLoopback(t.app);
    try {
      const { port } = server;
      // Written by hand: HTTP clients merge or refuse repeated Authorization headers.
      const raw = await new Promise<string>((resolve, reject) => {
        const socket = createConnection({ host: '127.0.0.1', port }, () => {
          socket.end(
            `GET /v1/pets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${API_KEY}\r\nAuthorization: Bearer other\r\nConnection: close\r\n\r\n`,
          );
        });
        let text = '';
        socket
          .on('data', (c: Buffer) => (text += c.toString()))
          .on('end', () => resolve(text))
          .on('error', reject);
      });
      const res = { status: Number(raw.split(' ')[1]), body: raw.slice(raw.indexOf('\r\n\r\n') + 4) };
      expect(res.status).toBe(401);
      expect(JSON.parse(res.body)).toEqual({ code: 'unauthorized', message: expect.stringContaining('Malformed'), status: 401 });
    } finally {
      await server.close();
    }
  });
});
