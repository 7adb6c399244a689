import { petStatusValues } from '../../../generated/openapi';
import { type Field, type Pet, auth, badRequest, insertPets, testAppForFile } from '../../support/harness';

const t = testAppForFile();
beforeEach(() => t.sql`TRUNCATE pets RESTART IDENTITY`);

const arrange = (count: number, status: (i: number) => Pet['status'] = (i) => petStatusValues[i % 3] ?? 'available') =>
  insertPets(
    t.sql,
    Array.from({ length: count }, (_, i) => ({ name: `Animal ${i}`, categoryId: i + 1, status: status(i) })),
  );

describe('GET /v1/pets (listPets)', () => {
  test('when the store is empty, then it answers 200 with an empty array', async () => {
    const res = await t.api.get('/v1/pets').set(auth()).expect(200);
    expect(res.body).toEqual([]);
  });

  test('when no limit is given, then the first 20 animals are returned in ascending id order', async () => {
    const pets = await arrange(25);
    const res = await t.api.get('/v1/pets').set(auth()).expect(200);
    expect(res.body).toEqual(pets.slice(0, 20));
  });

  test.each([1, 7, 100])('when limit=%i, then at most that many animals are returned', async (limit) => {
    const pets = await arrange(105);
    const res = await t.api.get(`/v1/pets?limit=${limit}`).set(auth()).expect(200);
    expect(res.body).toEqual(pets.slice(0, limit));
  });

  test.each(petStatusValues)('when status=%s, then only animals with that status are returned, in id order', async (status) => {
    const pets = await arrange(30);
    const res = await t.api.get(`/v1/pets?status=${status}&limit=100`).set(auth()).expect(200);
    expect(res.body).toEqual(pets.filter((p) => p.status === status));
    expect(res.body).toHaveLength(10);
  });

  test.each([
    ['categoryId=2', (p: Pet) => p.categoryId === 2],
    ['categoryId=-7', (p: Pet) => p.categoryId === -7],
    ['categoryId=2&status=sold', (p: Pet) => p.categoryId === 2 && p.status === 'sold'],
    ['status=pending&categoryId=3', (p: Pet) => p.categoryId === 3 && p.status === 'pending'],
    ['categoryId=99', () => false],
  ])('when %s, then only the animals of that category (and status) are returned, in id order', async (query, keep) => {
    const pets = await insertPets(
      t.sql,
      Array.from({ length: 40 }, (_, i) => ({
        name: `Animal ${i}`,
        categoryId: [2, 3, -7][i % 3] ?? 2,
        status: petStatusValues[Math.floor(i / 3) % 3] ?? 'available',
      })),
    );
    const res = await t.api.get(`/v1/pets?${query}&limit=100`).set(auth()).expect(200);
    expect(res.body).toEqual(pets.filter(keep));
  });

  test('when status and limit are combined, then the limit applies after the filter', async () => {
    const pets = await arrange(30);
    const res = await t.api.get('/v1/pets?status=sold&limit=3').set(auth()).expect(200);
    expect(res.body).toEqual(pets.filter((p) => p.status === 'sold').slice(0, 3));
  });

  test('when ids are beyond 2^32, then they come back as exact JSON numbers', async () => {
    await t.sql`ALTER TABLE pets ALTER COLUMN id RESTART WITH 9007199254740000`;
    const [pet] = await insertPets(t.sql, [{ name: 'Big', categoryId: 9007199254740991, status: 'pending' }]);
    const res = await t.api.get('/v1/pets').set(auth()).expect(200);
    // Written by the serialiser compiled from Pet: its properties in the schema's order (NewPet's, then id).
    expect(res.text).toBe(`[{"name":"Big","categoryId":9007199254740991,"status":"pending","id":9007199254740000}]`);
    expect(res.body).toEqual([pet]);
  });

  describe('when the query is invalid, then 400 names the parameter and the rule', () => {
    test.each([
      ['limit=0', "query parameter 'limit' must be >= 1", [['query', 'limit', 'minimum']]],
      ['limit=101', "query parameter 'limit' must be <= 100", [['query', 'limit', 'maximum']]],
      ['limit=-1', "query parameter 'limit' must be >= 1", [['query', 'limit', 'minimum']]],
      ['limit=abc', "query parameter 'limit' must be a decimal integer", [['query', 'limit', 'decimalInteger']]],
      ['limit=1.5', "query parameter 'limit' must be a decimal integer", [['query', 'limit', 'decimalInteger']]],
      ['limit=1.0', "query parameter 'limit' must be a decimal integer", [['query', 'limit', 'decimalInteger']]],
      ['limit=1e1', "query parameter 'limit' must be a decimal integer", [['query', 'limit', 'decimalInteger']]],
      ['limit=0x10', "query parameter 'limit' must be a decimal integer", [['query', 'limit', 'decimalInteger']]],
      ['limit=%205', "query parameter 'limit' must be a decimal integer", [['query', 'limit', 'decimalInteger']]],
      ['limit=', "query parameter 'limit' must be a decimal integer", [['query', 'limit', 'decimalInteger']]],
      [
        'limit=9007199254740993',
        "query parameter 'limit' must be <= 100",
        [
          ['query', 'limit', 'maximum'],
          ['query', 'limit', 'format'],
        ],
      ],
      ['limit=1&limit=2', "query parameter 'limit' must be integer", [['query', 'limit', 'type']]],
      ['status=lost', "query parameter 'status' must be one of: available, pending, sold", [['query', 'status', 'enum']]],
      ['status=SOLD', "query parameter 'status' must be one of: available, pending, sold", [['query', 'status', 'enum']]],
      ['color=red', "query parameter 'color' is not allowed", [['query', 'color', 'additionalProperties']]],
      // Found by the fuzzer: a parameter named __proto__ must stay a parameter.
      ['limit=5&__proto__=1', "query parameter '__proto__' is not allowed", [['query', '__proto__', 'additionalProperties']]],
      ['constructor=1', "query parameter 'constructor' is not allowed", [['query', 'constructor', 'additionalProperties']]],
      ['categoryId=abc', "query parameter 'categoryId' must be a decimal integer", [['query', 'categoryId', 'decimalInteger']]],
      ['categoryId=1.5', "query parameter 'categoryId' must be a decimal integer", [['query', 'categoryId', 'decimalInteger']]],
      ['categoryId=', "query parameter 'categoryId' must be a decimal integer", [['query', 'categoryId', 'decimalInteger']]],
      [
        'categoryId=9007199254740992',
        "query parameter 'categoryId' must be <= 9007199254740991",
        [
          ['query', 'categoryId', 'maximum'],
          ['query', 'categoryId', 'format'],
        ],
      ],
      [
        'categoryId=-9007199254740992',
        "query parameter 'categoryId' must be >= -9007199254740991",
        [
          ['query', 'categoryId', 'minimum'],
          ['query', 'categoryId', 'format'],
        ],
      ],
      ['categoryId=1&categoryId=2', "query parameter 'categoryId' must be integer", [['query', 'categoryId', 'type']]],
    ] as [string, string, Field[]][])('when %s, then 400 names the parameter', async (query, message, fields) => {
      const res = await t.api.get(`/v1/pets?${query}`).set(auth()).expect(400);
      expect(res.body).toEqual(badRequest('validation_failed', expect.stringContaining(message), fields));
      for (const { detail } of res.body.errors) expect(res.body.message).toContain(detail);
    });

    test('when several parameters are wrong at once, then all are named', async () => {
      const res = await t.api.get('/v1/pets?limit=500&status=lost&color=red').set(auth()).expect(400);
      expect(res.body.message).toContain("'limit' must be <= 100");
      expect(res.body.message).toContain("'status' must be one of");
      expect(res.body.message).toContain("'color' is not allowed");
      expect(res.body.errors.map((e: { name: string; rule: string }) => [e.name, e.rule])).toEqual(
        expect.arrayContaining([
          ['limit', 'maximum'],
          ['status', 'enum'],
          ['color', 'additionalProperties'],
        ]),
      );
    });
  });

  test('when the key is missing, then 401 comes before any validation', async () => {
    const res = await t.api.get('/v1/pets?limit=0').expect(401);
    expect(res.body.code).toBe('unauthorized');
  });
});
