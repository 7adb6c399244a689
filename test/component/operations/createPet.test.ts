import { BODY_LIMIT_BYTES } from '../../../src/http/body';
import { onlyRow, queriesInFlight } from '../../../src/store/database/db';
import { waitFor } from '../../support/load';
import { type Field, type Pet, auth, badRequest, buildNewPet, listenOnLoopback, testAppForFile } from '../../support/harness';

const t = testAppForFile();

const stored = async (id: number) =>
  onlyRow(await t.sql<Pet[]>`SELECT id, name, category_id AS "categoryId", status FROM pets WHERE id = ${id}`, `pet ${id}`);
const count = async () => onlyRow(await t.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM pets`, 'count(*)').n;

describe('POST /v1/pets (createPet)', () => {
  test('when the body is valid, then 201 returns the stored animal with its new id', async () => {
    const body = buildNewPet({ status: 'pending' });
    const res = await t.api.post('/v1/pets').set(auth()).send(body).expect(201);
    expect(res.body).toEqual({ id: expect.any(Number), ...body });
    expect(await stored(res.body.id)).toEqual(res.body);
  });

  test('when status is omitted, then the animal is stored and returned as available', async () => {
    const body = buildNewPet();
    const res = await t.api.post('/v1/pets').set(auth()).send(body).expect(201);
    expect(res.body.status).toBe('available');
    expect((await stored(res.body.id)).status).toBe('available');
  });

  test('when two animals are created, then each gets its own increasing id', async () => {
    const a = await t.api.post('/v1/pets').set(auth()).send(buildNewPet()).expect(201);
    const b = await t.api.post('/v1/pets').set(auth()).send(buildNewPet()).expect(201);
    expect(b.body.id).toBeGreaterThan(a.body.id);
  });

  test('when the client sends an id and unknown fields, then they are ignored and never stored', async () => {
    const body = { ...buildNewPet(), id: 999_999, owner: 'x', __proto__: { polluted: true } };
    const res = await t.api.post('/v1/pets').set(auth()).send(JSON.stringify(body)).set('Content-Type', 'application/json').expect(201);
    expect(res.body.id).not.toBe(999_999);
    expect(Object.keys(res.body).sort()).toEqual(['categoryId', 'id', 'name', 'status']);
    expect(await t.sql`SELECT id FROM pets WHERE id = 999999`).toEqual([]);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  test.each([
    ['a one-character name', 'x'],
    ['a 200-character name', 'n'.repeat(200)],
    ['a name of 200 astral characters', '🐈'.repeat(200)],
    ['a name with accents and spaces', 'Zoë  the Ünicorn'],
  ])('when the body has %s, then it is stored exactly', async (_what, name) => {
    const res = await t.api.post('/v1/pets').set(auth()).send(buildNewPet({ name })).expect(201);
    expect((await stored(res.body.id)).name).toBe(name);
  });

  test.each([
    ['the smallest safe integer', -9007199254740991],
    ['the largest safe integer', 9007199254740991],
    ['zero', 0],
  ])('when categoryId is %s, then it is stored and returned exactly', async (_what, categoryId) => {
    const res = await t.api.post('/v1/pets').set(auth()).send(buildNewPet({ categoryId })).expect(201);
    expect(res.body.categoryId).toBe(categoryId);
    expect((await stored(res.body.id)).categoryId).toBe(categoryId);
  });

  describe('when the body is invalid, then 400 names the field and the rule, and nothing is stored', () => {
    test.each([
      ['name missing', { categoryId: 1 }, "body property 'name' is required", [['body', '/name', 'required']]],
      ['categoryId missing', { name: 'Rex' }, "body property 'categoryId' is required", [['body', '/categoryId', 'required']]],
      [
        'both missing',
        {},
        "body property 'name' is required; body property 'categoryId' is required",
        [
          ['body', '/name', 'required'],
          ['body', '/categoryId', 'required'],
        ],
      ],
      [
        'name empty',
        { name: '', categoryId: 1 },
        "body property 'name' must NOT have fewer than 1 characters",
        [['body', '/name', 'minLength']],
      ],
      [
        'name too long',
        { name: 'n'.repeat(201), categoryId: 1 },
        "body property 'name' must NOT have more than 200 characters",
        [['body', '/name', 'maxLength']],
      ],
      ['name not a string', { name: 42, categoryId: 1 }, "body property 'name' must be string", [['body', '/name', 'type']]],
      ['name with NUL', { name: 'a\u0000b', categoryId: 1 }, "body property 'name' must match the pattern", [['body', '/name', 'pattern']]],
      [
        'name with a newline',
        { name: 'a\nb', categoryId: 1 },
        "body property 'name' must match the pattern",
        [['body', '/name', 'pattern']],
      ],
      [
        'name with a C1 control',
        { name: 'a\u0085b', categoryId: 1 },
        "body property 'name' must match the pattern",
        [['body', '/name', 'pattern']],
      ],
      [
        'categoryId a string',
        { name: 'Rex', categoryId: '1' },
        "body property 'categoryId' must be integer",
        [['body', '/categoryId', 'type']],
      ],
      [
        'categoryId fractional',
        { name: 'Rex', categoryId: 1.5 },
        "body property 'categoryId' must be integer",
        [
          ['body', '/categoryId', 'type'],
          ['body', '/categoryId', 'format'],
        ],
      ],
      [
        'categoryId null',
        { name: 'Rex', categoryId: null },
        "body property 'categoryId' must be integer",
        [['body', '/categoryId', 'type']],
      ],
      [
        'status unknown',
        { name: 'Rex', categoryId: 1, status: 'lost' },
        "body property 'status' must be one of: available, pending, sold",
        [['body', '/status', 'enum']],
      ],
      [
        'status null',
        { name: 'Rex', categoryId: 1, status: null },
        "body property 'status'",
        [
          ['body', '/status', 'type'],
          ['body', '/status', 'enum'],
        ],
      ],
      ['an array', [{ name: 'Rex', categoryId: 1 }], 'request body must be an object, got an array', [['body', '', 'type']]],
      ['a string', 'Rex', 'request body must be an object, got a string', [['body', '', 'type']]],
      ['null', null, 'request body must be an object, got null', [['body', '', 'type']]],
      ['a number', 42, 'request body must be an object, got a number', [['body', '', 'type']]],
      ['a boolean', true, 'request body must be an object, got a boolean', [['body', '', 'type']]],
      ['false', false, 'request body must be an object, got a boolean', [['body', '', 'type']]],
      ['zero', 0, 'request body must be an object, got a number', [['body', '', 'type']]],
      ['an empty string', '', 'request body must be an object, got a string', [['body', '', 'type']]],
    ] as [string, unknown, string, Field[]][])(
      'when the body is %s, then it is answered as the contract says',
      async (_what, body, message, fields) => {
        const before = await count();
        const res = await t.api.post('/v1/pets').set(auth()).set('Content-Type', 'application/json').send(JSON.stringify(body)).expect(400);
        expect(res.body).toEqual(badRequest('validation_failed', expect.stringContaining(message), fields));
        // Each field's sentence is the message's, for that field.
        for (const { detail } of res.body.errors) expect(res.body.message).toContain(detail);
        expect(await count()).toBe(before);
      },
    );
  });

  describe('when the body is JSON encoded twice (a JSON string whose text is JSON), then 400 says it is a string, and nothing is stored', () => {
    // Each body is decoded once: the string's content is never decoded again, by us or by openapi-backend.
    test.each([
      ['a valid pet with a status', JSON.stringify(JSON.stringify({ name: 'S', categoryId: 7, status: 'sold' }))],
      ['a valid pet without a status', JSON.stringify(JSON.stringify({ name: 'S', categoryId: 7 }))],
      ['text that is not JSON', '"AAA"'],
      ['a pet with an inexact number inside', '"{\\"name\\":\\"S\\",\\"categoryId\\":1e-400}"'],
      ['a pet encoded three times', JSON.stringify(JSON.stringify(JSON.stringify({ name: 'S', categoryId: 7 })))],
      ['an array inside', JSON.stringify(JSON.stringify([{ name: 'S', categoryId: 7 }]))],
      ['a number inside', '"42"'],
      ['null inside', '"null"'],
    ])('when the body is %s, then it is answered as the contract says', async (_what, text) => {
      const before = await count();
      const res = await t.api.post('/v1/pets').set(auth()).set('Content-Type', 'application/json').send(text).expect(400);
      const message = 'request body must be an object, got a string';
      expect(res.body).toEqual(badRequest('validation_failed', message, [['body', '', 'type']], [message]));
      expect(await count()).toBe(before);
    });

    test("when a property's value is JSON text, then it is an ordinary string, stored as the text it is", async () => {
      const name = JSON.stringify({ name: 'inner', categoryId: 1 });
      const res = await t.api.post('/v1/pets').set(auth()).send(buildNewPet({ name })).expect(201);
      expect((await stored(res.body.id)).name).toBe(name);
    });

    test('when categoryId is a JSON string of a number, then it is refused, not decoded', async () => {
      const res = await t.api
        .post('/v1/pets')
        .set(auth())
        .set('Content-Type', 'application/json')
        .send('{"name":"Rex","categoryId":"7"}')
        .expect(400);
      expect(res.body.message).toBe("body property 'categoryId' must be integer");
    });
  });

  describe('when a number in the body would change on parsing, then 400 and nothing is stored', () => {
    test.each([
      ['9007199254740993', "The number 9007199254740993 in property 'categoryId' cannot be represented exactly"],
      ['-9007199254740993', "The number -9007199254740993 in property 'categoryId' cannot be represented exactly"],
      ['4503599627370497.5', "The number 4503599627370497.5 in property 'categoryId' cannot be represented exactly"],
      ['1.0000000000000001', "The number 1.0000000000000001 in property 'categoryId' cannot be represented exactly"],
      ['12345678901234567890123', "The number 12345678901234567890123 in property 'categoryId' cannot be represented exactly"],
      // Written as a float beyond 2^53: refused by the int64 range rather than the parser.
      ['1e30', "body property 'categoryId' must be <= 9007199254740991"],
    ])('when categoryId is %s, then it is refused', async (literal, message) => {
      const before = await count();
      const res = await t.api
        .post('/v1/pets')
        .set(auth())
        .set('Content-Type', 'application/json')
        .send(`{"name":"Rex","categoryId":${literal}}`)
        .expect(400);
      expect(res.body.code).toBe('validation_failed');
      expect(res.body.message).toContain(message);
      // The field, by its JSON Pointer: the parser's rule, or for 1e30 the schema's range.
      expect(res.body.errors[0]).toMatchObject({
        in: 'body',
        pointer: '/categoryId',
        rule: literal === '1e30' ? 'maximum' : 'exactInteger',
      });
      expect(await count()).toBe(before);
    });

    test.each(['9007199254740992', '-9007199254740992', '18446744073709551616', '1e22'])(
      'when categoryId is %s, exact but beyond ±(2^53−1), then the schema refuses it',
      async (literal) => {
        const before = await count();
        const res = await t.api
          .post('/v1/pets')
          .set(auth())
          .set('Content-Type', 'application/json')
          .send(`{"name":"Rex","categoryId":${literal}}`)
          .expect(400);
        expect(res.body.message).toContain("body property 'categoryId' must be an integer between -9007199254740991 and 9007199254740991");
        expect(await count()).toBe(before);
      },
    );

    test('when integers are written as 1.0 or 10e0, then they are the integers they denote', async () => {
      const res = await t.api
        .post('/v1/pets')
        .set(auth())
        .set('Content-Type', 'application/json')
        .send('{"name":"Rex","categoryId":10e0}')
        .expect(201);
      expect(res.body.categoryId).toBe(10);
    });
  });

  test('when a string holds an unpaired surrogate, then 400 rather than storing U+FFFD', async () => {
    const res = await t.api
      .post('/v1/pets')
      .set(auth())
      .set('Content-Type', 'application/json')
      .send('{"name":"a\\ud800b","categoryId":1}')
      .expect(400);
    const message = "Body property 'name' contains an unpaired UTF-16 surrogate, which is not valid Unicode text";
    expect(res.body).toEqual(badRequest('validation_failed', message, [['body', '/name', 'unicode']], [message]));
  });

  test('when the JSON is malformed, then 400 malformed_json', async () => {
    const res = await t.api.post('/v1/pets').set(auth()).set('Content-Type', 'application/json').send('{"name": "Rex",').expect(400);
    expect(res.body).toEqual(
      badRequest('malformed_json', expect.stringMatching(/^The request body is not valid JSON: /), [['body', '', 'json']]),
    );
  });

  test.each([
    ['no body at all', undefined],
    ['an empty body', ''],
    ['only whitespace', '   \n'],
  ])('when there is %s, then 400 says the body is required', async (_what, body) => {
    const req = t.api.post('/v1/pets').set(auth()).set('Content-Type', 'application/json');
    const res = await (body === undefined ? req : req.send(body)).expect(400);
    expect(res.body).toEqual(
      badRequest('validation_failed', 'request body is required', [['body', '', 'required']], ['request body is required']),
    );
  });

  test.each([
    ['text/plain', 'Content-Type must be application/json, got "text/plain"'],
    ['application/x-www-form-urlencoded', 'Content-Type must be application/json'],
    ['application/jsonx', 'Content-Type must be application/json'],
    ['application/json; charset=latin1', 'JSON must be sent as UTF-8, got charset latin1'],
  ])('when Content-Type is %s, then 415', async (contentType, message) => {
    const res = await t.api.post('/v1/pets').set(auth()).set('Content-Type', contentType).send(JSON.stringify(buildNewPet())).expect(415);
    expect(res.body).toEqual({ code: 'unsupported_media_type', message: expect.stringContaining(message), status: 415 });
  });

  test('when Content-Type is missing but a body is sent, then 415', async () => {
    const res = await t.api
      .post('/v1/pets')
      .set(auth())
      .send(Buffer.from(JSON.stringify(buildNewPet())))
      .unset('Content-Type')
      .expect(415);
    expect(res.body.message).toBe('Content-Type must be application/json, got none');
  });

  test('when Content-Type has parameters and different case, then it is still JSON', async () => {
    await t.api
      .post('/v1/pets')
      .set(auth())
      .set('Content-Type', 'Application/JSON; charset=UTF-8')
      .send(JSON.stringify(buildNewPet()))
      .expect(201);
  });

  test('when the body is larger than the limit, then 413 and nothing is stored', async () => {
    const before = await count();
    const body = JSON.stringify({ ...buildNewPet(), padding: 'x'.repeat(BODY_LIMIT_BYTES) });
    const res = await t.api.post('/v1/pets').set(auth()).set('Content-Type', 'application/json').send(body).expect(413);
    expect(res.body).toEqual({ code: 'payload_too_large', message: `The request body exceeds ${BODY_LIMIT_BYTES} bytes`, status: 413 });
    expect(await count()).toBe(before);
  });

  test('when the key is missing, then 401 and the body is not even read', async () => {
    const before = await count();
    const res = await t.api.post('/v1/pets').set('Content-Type', 'text/plain').send('not json').expect(401);
    expect(res.body.code).toBe('unauthorized');
    expect(await count()).toBe(before);
  });

  test('when the body is not valid UTF-8, then 400 and nothing is stored (never a U+FFFD in its place)', async () => {
    const before = await count();
    const bytes = Buffer.concat([Buffer.from('{"name":"Bad '), Buffer.from([0xff, 0xfe]), Buffer.from('","categoryId":1}')]);
    // Sent as bytes by fetch: supertest would serialize a Buffer as JSON.
    const server = await listenOnLoopback(t.app);
    try {
      const res = await fetch(`${server.origin}/v1/pets`, {
        method: 'POST',
        headers: { ...auth(), 'Content-Type': 'application/json' },
        body: bytes,
      });
      expect(res.status).toBe(400);
      const message = 'The request body is not valid UTF-8';
      expect(await res.json()).toEqual(badRequest('malformed_json', message, [['body', '', 'utf8']], [message]));
    } finally {
      await server.close();
    }
    expect(await count()).toBe(before);
  });

  // The embedded PostgreSQL serves the test's statements and the app's from one session: a lock there blocks nobody.
  if (process.env.TEST_DB_MODE !== 'embedded')
    test('when 20 creates arrive while the table is locked, then each is answered 201 with its own animal, committed in at most three transactions', async () => {
      const lock = await t.sql.reserve();
      let answers: Promise<{ status: number; body: Pet }[]> | undefined;
      try {
        await lock`BEGIN`;
        await lock`LOCK TABLE pets IN SHARE ROW EXCLUSIVE MODE`;
        const bodies = Array.from({ length: 20 }, (_, i) => buildNewPet({ name: `together ${i}` }));
        answers = Promise.all(
          bodies.map((body) =>
            t.api
              .post('/v1/pets')
              .set(auth())
              .send(body)
              .then((res) => res),
          ),
        );
        // Two groups wait for the lock (GROUPS); every other create waits in the queue for the next group.
        await waitFor(() => Promise.resolve(queriesInFlight() === 20));
      } finally {
        await lock`COMMIT`;
        lock.release();
      }
      const replies = await answers;
      expect(replies.map((r) => r.status)).toEqual(Array(20).fill(201));
      for (const { body } of replies) expect(await stored(body.id)).toEqual(body);
      expect(new Set(replies.map((r) => r.body.name)).size).toBe(20);
      const ids = replies.map((r) => r.body.id);
      const [{ n } = { n: 0 }] = await t.sql<
        { n: number }[]
      >`SELECT count(DISTINCT xmin::text)::int AS n FROM pets WHERE id IN ${t.sql(ids)}`;
      expect(n).toBeGreaterThanOrEqual(1);
      expect(n).toBeLessThanOrEqual(3);
    });
});
