import pino from 'pino';
import { type LoggingOptions, type RequestLogFields, createLogging, isoTimeByMillisecond } from '../../../src/ops/logger';
import { auth, buildNewPet, issueKey, testAppForFile } from '../../support/harness';

const t = testAppForFile();

const lineFor = (requestId: string | undefined) => t.logs().find((l) => l.req?.id === requestId);

describe('request logs (pino, one JSON line per request)', () => {
  test('when a request succeeds, then its line names the request id, route, operation, status, duration, key and client, never the key itself', async () => {
    const res = await t.api.post('/v1/pets').set(auth()).set('X-Request-Id', 'req-create-1').send(buildNewPet()).expect(201);
    expect(res.headers['x-request-id']).toBe('req-create-1');
    const line = lineFor('req-create-1');
    expect(line).toEqual(
      expect.objectContaining({
        level: 30,
        msg: 'request completed',
        req: { id: 'req-create-1', method: 'POST', path: '/v1/pets' },
        res: { statusCode: 201 },
        route: '/v1/pets',
        operationId: 'createPet',
        apiKey: expect.stringMatching(/^env:[0-9a-f]{16}$/),
        client: line?.apiKey,
        responseTime: expect.any(Number),
      }),
    );
    const all = JSON.stringify(t.logs());
    expect(all).not.toContain('test-key-0123456789abcdef');
    expect(all).not.toMatch(/authorization/i);
  });

  test('when a managed key is used, then the line names the key by its id and the client by its name, never the secret', async () => {
    const issued = await issueKey(t, { client: 'logged-dashboard' });
    const res = await t.api.get('/v1/pets').set(auth(issued.key)).expect(200);
    expect(lineFor(res.headers['x-request-id'])).toEqual(
      expect.objectContaining({ apiKey: issued.listing.prefix, client: 'logged-dashboard', res: { statusCode: 200 } }),
    );
    expect(JSON.stringify(t.logs())).not.toContain(issued.key.slice(issued.listing.prefix.length));
  });

  test('when no request id is sent, or an unusable one, then one is made and echoed', async () => {
    const made = await t.api.get('/v1/pets').set(auth()).expect(200);
    expect(made.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    expect(lineFor(made.headers['x-request-id'])).toBeDefined();
    const refused = await t.api.get('/v1/pets').set(auth()).set('X-Request-Id', 'bad id with spaces').expect(200);
    expect(refused.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });

  test('when a caller is refused, then the line has the route template, not the URL, and no key identity', async () => {
    const res = await t.api.get('/v1/pets/12345').expect(401);
    expect(lineFor(res.headers['x-request-id'])).toEqual(
      expect.objectContaining({ route: '/v1/pets/{petId}', operationId: 'getPet', res: { statusCode: 401 } }),
    );
    expect(lineFor(res.headers['x-request-id'])?.apiKey).toBeUndefined();
  });
});

describe('the request line writer (src/ops/logger.ts)', () => {
  // The line every request writes is built by a template rather than by pino's serializer;
  // it must be the line pino would have written, byte for byte, whatever the logging's settings.
  const sameTime = (line: string) => line.replace(/"time":("[^"]*"|\d+)/, '"time":0');
  const fieldSets: RequestLogFields[] = [
    {
      req: { id: 'req-1', method: 'GET', path: '/v1/pets' },
      res: { statusCode: 200 },
      responseTime: 3,
      operationId: 'listPets',
      route: '/v1/pets',
      apiKey: 'asa_0123abcdEFGH',
      client: 'dashboard',
    },
    {
      req: { id: 'a"b\\c\u0001', method: 'DELETE', path: '/v1/pets/"%22\\' },
      res: { statusCode: 405 },
      responseTime: 0,
      operationId: undefined,
      route: '/v1/pets',
      apiKey: undefined,
    },
    { req: { id: 'x', method: 'GET', path: '/nowhere' }, res: { statusCode: 404 }, responseTime: 12 },
  ];
  test.each<[string, Omit<LoggingOptions, 'level' | 'destination'>]>([
    ['the product logging (ISO time, service field)', {}],
    ['epoch time and several fields', { time: pino.stdTimeFunctions.epochTime, base: { service: 's"q', pid: 42, host: 'h\\x' } }],
    ['no time and no fields', { time: pino.stdTimeFunctions.nullTime, base: {} }],
  ])('when the logger is made with %s, then the request line is byte for byte what pino writes', (_what, options) => {
    const lines: string[] = [];
    const { logger, requestLine } = createLogging({ level: 'info', destination: { write: (l: string) => lines.push(l) }, ...options });
    for (const fields of fieldSets) {
      logger.info(fields, 'request completed');
      requestLine(fields, 'request completed');
    }
    const [byPino, byTemplate] = [lines.filter((_, i) => i % 2 === 0), lines.filter((_, i) => i % 2 === 1)];
    expect(byTemplate.map(sameTime)).toEqual(byPino.map(sameTime));
    expect(byTemplate).toHaveLength(fieldSets.length);
  });

  test("when the time is asked for several times a millisecond, then it is pino's ISO time, made once per millisecond", () => {
    const ours = isoTimeByMillisecond();
    const now = jest.spyOn(Date, 'now');
    try {
      for (const ms of [0, 1_795_305_600_000, 1_795_305_600_000, 1_795_305_600_001, 1_795_305_600_999, 1_795_305_601_000]) {
        now.mockReturnValue(ms);
        expect(ours()).toBe(pino.stdTimeFunctions.isoTime());
      }
    } finally {
      now.mockRestore();
    }
  });

  test('when the level is above info, then the request line writes nothing', () => {
    const lines: string[] = [];
    const { requestLine } = createLogging({ level: 'warn', destination: { write: (l: string) => lines.push(l) } });
    requestLine(fieldSets[0] as RequestLogFields, 'request completed');
    expect(lines).toEqual([]);
  });
});
