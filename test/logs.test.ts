import pino from 'pino';
import { type RequestLogFields, createLogger, requestLineWriter } from '../src/logger';
import { type TestApp, auth, buildNewPet, startTestApp } from './support/harness';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

const lineFor = (requestId: string) => t.logs().find((l) => l.req?.id === requestId);

describe('request logs (pino, one JSON line per request)', () => {
  test('when a request succeeds, then its line names the request id, route, operation, status, duration and key, never the key itself', async () => {
    const res = await t.api.post('/v1/pets').set(auth()).set('X-Request-Id', 'req-create-1').send(buildNewPet()).expect(201);
    expect(res.headers['x-request-id']).toBe('req-create-1');
    const line = lineFor('req-create-1');
    expect(line).toEqual(expect.objectContaining({
      level: 30,
      msg: 'request completed',
      req: { id: 'req-create-1', method: 'POST', path: '/v1/pets' },
      res: { statusCode: 201 },
      route: '/v1/pets',
      operationId: 'createPet',
      apiKey: expect.stringMatching(/^key:[0-9a-f]{8}$/),
      responseTime: expect.any(Number),
    }));
    const all = JSON.stringify(t.logs());
    expect(all).not.toContain('test-key-0123456789abcdef');
    expect(all).not.toMatch(/authorization/i);
  });

  test('when no request id is sent, or an unusable one, then one is made and echoed', async () => {
    const made = await t.api.get('/v1/pets').set(auth()).expect(200);
    expect(made.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    expect(lineFor(made.headers['x-request-id'])).toBeDefined();
    const refused = await t.api.get('/v1/pets').set(auth()).set('X-Request-Id', 'bad id with spaces').expect(200);
    expect(refused.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });

  test('the route is the template, not the URL, and a refused caller has no key identity', async () => {
    const res = await t.api.get('/v1/pets/12345').expect(401);
    expect(lineFor(res.headers['x-request-id'])).toEqual(expect.objectContaining({ route: '/v1/pets/{petId}', operationId: 'getPet', res: { statusCode: 401 } }));
    expect(lineFor(res.headers['x-request-id'])?.apiKey).toBeUndefined();
  });
});

describe('the request line writer (src/logger.ts)', () => {
  // The line every request writes is built by a template rather than by pino's serializer;
  // it must be the line pino would have written, byte for byte, whatever the logger's settings.
  const sameTime = (line: string) => line.replace(/"time":("[^"]*"|\d+)/, '"time":0');
  const fieldSets: RequestLogFields[] = [
    { req: { id: 'req-1', method: 'GET', path: '/v1/pets' }, res: { statusCode: 200 }, responseTime: 3, operationId: 'listPets', route: '/v1/pets', apiKey: 'key:0123abcd' },
    { req: { id: 'a"b\\c\u0001', method: 'DELETE', path: '/v1/pets/"%22\\' }, res: { statusCode: 405 }, responseTime: 0, operationId: undefined, route: '/v1/pets', apiKey: undefined },
    { req: { id: 'x', method: 'GET', path: '/nowhere' }, res: { statusCode: 404 }, responseTime: 12 },
  ];
  test.each([
    ['the product logger (ISO time, service binding)', (write: (l: string) => void) => createLogger('info', { write })],
    ['a default pino logger (epoch time, pid and hostname)', (write: (l: string) => void) => pino({ level: 'info' }, { write })],
    ['a child logger', (write: (l: string) => void) => createLogger('info', { write }).child({ worker: 2 })],
  ])('%s', (_what, make) => {
    const byPino: string[] = [];
    const byTemplate: string[] = [];
    const pinoLogger = make((l) => byPino.push(l));
    const templateLogger = make((l) => byTemplate.push(l));
    const write = requestLineWriter(templateLogger);
    for (const fields of fieldSets) {
      pinoLogger.info(fields, 'request completed');
      write(fields, 'request completed');
    }
    expect(byTemplate.map(sameTime)).toEqual(byPino.map(sameTime));
  });

  test('below its level it writes nothing', () => {
    const lines: string[] = [];
    const write = requestLineWriter(createLogger('warn', { write: (l: string) => lines.push(l) }));
    write(fieldSets[0], 'request completed');
    expect(lines).toEqual([]);
  });
});
