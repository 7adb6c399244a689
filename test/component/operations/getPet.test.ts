import supertest from 'supertest';
import { type Field, auth, badRequest, insertPet, testAppForFile } from '../../support/harness';

const t = testAppForFile();

// From spec/openapi.yaml: getPet is deprecated since 2026-11-22 and removed on 2030-12-05.
const DEPRECATION_HEADERS = {
  deprecation: `@${Date.UTC(2026, 10, 22) / 1000}`,
  sunset: 'Thu, 05 Dec 2030 00:00:00 GMT',
  // RFC 9745 §3: rel="deprecation" names getPet's entry on the service's reference page, which says how to migrate.
  link: '</v1/pets>; rel="successor-version", </docs/#/animals/getPet>; rel="deprecation"',
};

describe('GET /v1/pets/{petId} (getPet, deprecated)', () => {
  test('when the animal exists, then 200 returns it', async () => {
    const pet = await insertPet(t.sql, { name: 'Rex', categoryId: 3, status: 'sold' });
    const res = await t.api.get(`/v1/pets/${pet.id}`).set(auth()).expect(200);
    expect(res.body).toEqual(pet);
  });

  test('when an animal was created through the API, then it can be fetched', async () => {
    const created = await t.api.post('/v1/pets').set(auth()).send({ name: 'Tom', categoryId: 9 }).expect(201);
    const res = await t.api.get(`/v1/pets/${created.body.id}`).set(auth()).expect(200);
    expect(res.body).toEqual(created.body);
  });

  test('when no animal has the id, then 404 not_found names it', async () => {
    const res = await t.api.get('/v1/pets/9007199254740991').set(auth()).expect(404);
    expect(res.body).toEqual({ code: 'not_found', message: 'No animal has id 9007199254740991', status: 404 });
  });

  test('when a trailing slash is added, then it is the same resource', async () => {
    const pet = await insertPet(t.sql, { name: 'Slash', categoryId: 1, status: 'available' });
    const res = await t.api.get(`/v1/pets/${pet.id}/`).set(auth()).expect(200);
    expect(res.body).toEqual(pet);
  });

  describe('when petId is not a positive integer, then 400 names it', () => {
    test.each([
      ['0', "path parameter 'petId' must be >= 1", [['path', 'petId', 'minimum']]],
      ['-1', "path parameter 'petId' must be >= 1", [['path', 'petId', 'minimum']]],
      ['abc', "path parameter 'petId' must be a decimal integer", [['path', 'petId', 'decimalInteger']]],
      ['1.5', "path parameter 'petId' must be a decimal integer", [['path', 'petId', 'decimalInteger']]],
      ['0x10', "path parameter 'petId' must be a decimal integer", [['path', 'petId', 'decimalInteger']]],
      ['1e3', "path parameter 'petId' must be a decimal integer", [['path', 'petId', 'decimalInteger']]],
      ['%20', "path parameter 'petId' must be a decimal integer", [['path', 'petId', 'decimalInteger']]],
      ['%201', "path parameter 'petId' must be a decimal integer", [['path', 'petId', 'decimalInteger']]],
      [
        '9007199254740992',
        "path parameter 'petId' must be <= 9007199254740991",
        [
          ['path', 'petId', 'maximum'],
          ['path', 'petId', 'format'],
        ],
      ],
      [
        '9223372036854775808',
        "path parameter 'petId' must be <= 9007199254740991",
        [
          ['path', 'petId', 'maximum'],
          ['path', 'petId', 'format'],
        ],
      ],
      ['%E0%A4%A', 'The request path has malformed percent-encoding', [['path', '', 'percentEncoding']]],
    ] as [string, string, Field[]][])('when petId is %s, then 400 says what is wrong with it', async (petId, message, fields) => {
      const res = await t.api.get(`/v1/pets/${petId}`).set(auth()).expect(400);
      expect(res.body).toEqual(badRequest('validation_failed', expect.stringContaining(message), fields));
    });
  });

  describe('every response carries Deprecation, Sunset and Link, derived from the spec', () => {
    test.each([
      ['200', 200, true],
      ['404', 404, true],
      ['400', 400, true],
      ['401', 401, false],
    ])('when the answer is %s, then it carries the deprecation headers', async (_name, status, withKey) => {
      const pet = await insertPet(t.sql, { name: 'Old', categoryId: 1, status: 'available' });
      const path = status === 404 ? '/v1/pets/9007199254740990' : status === 400 ? '/v1/pets/x' : `/v1/pets/${pet.id}`;
      const req = t.api.get(path);
      const res = await (withKey ? req.set(auth()) : req).expect(status);
      expect(res.headers).toMatchObject(DEPRECATION_HEADERS);
    });
  });

  test('when the deprecation link is followed, then it is the reference page, whose getPet entry says what to use instead', async () => {
    const res = await t.api.get('/v1/pets/1').set(auth());
    const target = /<([^>]+)>; rel="deprecation"/.exec(res.headers.link ?? '')?.[1] ?? '';
    const [page, fragment] = target.split('#');
    expect(fragment).toBe('/animals/getPet');
    const html = await supertest(t.app)
      .get(page ?? '')
      .expect(200);
    expect(html.headers['content-type']).toMatch(/^text\/html/);
    // Swagger UI opens #/<tag>/<operationId> when deep linking is on.
    const init = await supertest(t.app).get(`${page}swagger-ui-init.js`).expect(200);
    expect(init.text).toContain('"deepLinking": true');
    const getPet = (t.spec.document.paths['/pets/{petId}'] as { get: { tags: string[]; description: string } }).get;
    expect(getPet.tags[0]).toBe('animals');
    expect(getPet.description).toMatch(/Use\s+`GET \/pets`/);
  });

  test('when an operation is not deprecated, then its responses carry no deprecation headers', async () => {
    const res = await t.api.get('/v1/pets').set(auth()).expect(200);
    expect(res.headers.deprecation).toBeUndefined();
    expect(res.headers.sunset).toBeUndefined();
  });

  test('when asked with HEAD, then the headers come without a body', async () => {
    const pet = await insertPet(t.sql, { name: 'Head', categoryId: 1, status: 'available' });
    const res = await t.api.head(`/v1/pets/${pet.id}`).set(auth()).expect(200);
    expect(res.headers).toMatchObject(DEPRECATION_HEADERS);
    expect(res.text).toBeUndefined();
  });
});
