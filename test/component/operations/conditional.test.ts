/**
 * Conditional reads (RFC 9110 §13.1.2): getPet and every listPets page carry a strong ETag; a
 * request whose If-None-Match names it is answered 304, without a body, after its key and scope
 * are checked, and is not counted against the rate limit.
 */
import { type TestApp, auth, insertPet, insertPets, issueKey, startTestApp } from '../../support/harness';

const LIMIT = 50;
let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ rateLimit: { requests: LIMIT, windowSeconds: 3600 } });
});
afterAll(() => t.close());
beforeEach(() => t.sql`TRUNCATE pets RESTART IDENTITY`);

/** `r` of the RateLimit header: what is left of the window. */
const remaining = (res: { headers: Record<string, string> }) => Number(/;r=(\d+);/.exec(res.headers.ratelimit ?? '')?.[1]);
const read = (path: string, ifNoneMatch?: string) => {
  const req = t.api.get(path).set(auth());
  return ifNoneMatch === undefined ? req : req.set('If-None-Match', ifNoneMatch);
};

describe('getPet: ETag and If-None-Match', () => {
  test('when an animal is read twice, then both answers carry the same strong ETag and Cache-Control: private, no-cache', async () => {
    const pet = await insertPet(t.sql, { name: 'Tagged', categoryId: 1, status: 'available' });
    const first = await read(`/v1/pets/${pet.id}`).expect(200);
    const second = await read(`/v1/pets/${pet.id}`).expect(200);
    expect(first.headers.etag).toMatch(/^"[A-Za-z0-9_-]{22}"$/);
    expect(second.headers.etag).toBe(first.headers.etag);
    expect(first.headers['cache-control']).toBe('private, no-cache');
  });

  test.each([
    ['the tag itself', (tag: string) => tag],
    ['its weak form (W/: weak comparison)', (tag: string) => `W/${tag}`],
    ['a list holding it', (tag: string) => `"other", W/"x", ${tag}`],
    ['a list with empty members', (tag: string) => ` , ${tag},`],
    ['two header fields, the second holding it', (tag: string) => ['"other"', tag]],
    ['*', () => '*'],
  ])('when If-None-Match is %s, then 304 with no body, the ETag, the deprecation headers and no Content-Type', async (_what, condition) => {
    const pet = await insertPet(t.sql, { name: 'Same', categoryId: 1, status: 'sold' });
    const { etag } = (await read(`/v1/pets/${pet.id}`).expect(200)).headers as { etag: string };
    const res = await t.api
      .get(`/v1/pets/${pet.id}`)
      .set(auth())
      .set('If-None-Match', condition(etag) as string)
      .expect(304);
    expect(res.text ?? '').toBe('');
    expect(res.headers.etag).toBe(etag);
    expect(res.headers['cache-control']).toBe('private, no-cache');
    expect(res.headers['content-type']).toBeUndefined();
    expect(res.headers.deprecation).toBeDefined();
    expect(res.headers.link).toContain('rel="deprecation"');
  });

  test.each([
    ['another tag', '"AAAAAAAAAAAAAAAAAAAAAA"'],
    ['the tag unquoted (not an entity tag: the field is ignored)', 'TAG'],
    ['a list with one member that is not an entity tag', 'TAG-QUOTED, junk'],
    ['empty', ''],
  ])('when If-None-Match is %s, then the full answer', async (_what, condition) => {
    const pet = await insertPet(t.sql, { name: 'Other', categoryId: 1, status: 'sold' });
    const { etag } = (await read(`/v1/pets/${pet.id}`).expect(200)).headers as { etag: string };
    const sent = condition.replace('TAG-QUOTED', etag).replace('TAG', etag.slice(1, -1));
    const res = await read(`/v1/pets/${pet.id}`, sent).expect(200);
    expect(res.body).toEqual(pet);
    expect(res.headers.etag).toBe(etag);
  });

  test('when the animal changes, then its ETag changes and the old one gets the full answer', async () => {
    const pet = await insertPet(t.sql, { name: 'Changing', categoryId: 1, status: 'available' });
    const before = (await read(`/v1/pets/${pet.id}`).expect(200)).headers.etag as string;
    await t.sql`UPDATE pets SET status = 'sold' WHERE id = ${pet.id}`;
    const after = await read(`/v1/pets/${pet.id}`, before).expect(200);
    expect(after.body.status).toBe('sold');
    expect(after.headers.etag).not.toBe(before);
    await read(`/v1/pets/${pet.id}`, after.headers.etag).expect(304);
  });

  test('when If-None-Match is * and no animal has the id, then 404: there is no current representation', async () => {
    const res = await read('/v1/pets/999999', '*').expect(404);
    expect(res.body.code).toBe('not_found');
    expect(res.headers.etag).toBeUndefined();
    expect(res.headers['cache-control']).toBe('no-store');
  });

  test('when HEAD carries the tag, then 304 too', async () => {
    const pet = await insertPet(t.sql, { name: 'Head', categoryId: 1, status: 'available' });
    const { etag } = (await read(`/v1/pets/${pet.id}`).expect(200)).headers as { etag: string };
    await t.api.head(`/v1/pets/${pet.id}`).set(auth()).set('If-None-Match', etag).expect(304);
  });
});

describe('If-None-Match: bounded as the contract says (maxLength 2048, RFC 9110 §5.5 whitespace aside)', () => {
  test.each(['/v1/pets/{id}', '/v1/pets'])(
    'when %s gets an If-None-Match of 2049 characters, then 400 names the header and its bound',
    async (at) => {
      const pet = await insertPet(t.sql, { name: 'Bounded', categoryId: 1, status: 'available' });
      const res = await read(at.replace('{id}', String(pet.id)), `"${'a'.repeat(2047)}"`).expect(400);
      expect(res.body.errors).toEqual([expect.objectContaining({ in: 'header', name: 'If-None-Match', rule: 'maxLength' })]);
    },
  );

  test('when an If-None-Match of 2048 characters has whitespace around it, then it is within its bound: the whitespace is not part of the value', async () => {
    const pet = await insertPet(t.sql, { name: 'Bounded', categoryId: 1, status: 'available' });
    const tag = (await read(`/v1/pets/${pet.id}`).expect(200)).headers.etag as string;
    const list = `${tag},${' '.repeat(2048 - tag.length - 4)}"x"`;
    expect(list).toHaveLength(2048);
    await read(`/v1/pets/${pet.id}`, `   ${list}  \t`).expect(304);
    await read(`/v1/pets/${pet.id}`, `   ${list}x`).expect(400);
  });
});

describe('listPets pages: ETag and If-None-Match', () => {
  test('when a page is re-read with its tag, then 304 carries its Link; a page of another filter or limit has another tag', async () => {
    await insertPets(
      t.sql,
      [1, 2, 3, 4].map((i) => ({ name: `P${i}`, categoryId: i % 2, status: 'available' as const })),
    );
    const page = await read('/v1/pets?limit=2').expect(200);
    const again = await read('/v1/pets?limit=2', page.headers.etag).expect(304);
    expect(again.headers.link).toBe(page.headers.link);
    expect(again.headers.etag).toBe(page.headers.etag);
    const tags = new Set([page.headers.etag]);
    for (const q of ['limit=3', 'limit=2&categoryId=1', 'limit=2&status=available&categoryId=0', 'limit=2&status=sold'])
      tags.add((await read(`/v1/pets?${q}`).expect(200)).headers.etag);
    // The empty page of sold animals and every other page: five representations, five tags.
    expect(tags.size).toBe(5);
  });

  test('when the animals of a page stay the same but one is added after it, then the tag changes (its Link now names a next page)', async () => {
    await insertPets(
      t.sql,
      [1, 2].map((i) => ({ name: `P${i}`, categoryId: 1, status: 'available' as const })),
    );
    const last = await read('/v1/pets?limit=2').expect(200);
    expect(last.headers.link).toBeUndefined();
    await insertPet(t.sql, { name: 'P3', categoryId: 1, status: 'available' });
    const now = await read('/v1/pets?limit=2', last.headers.etag).expect(200);
    expect(now.body).toEqual(last.body);
    expect(now.headers.link).toMatch(/rel="next"$/);
    expect(now.headers.etag).not.toBe(last.headers.etag);
  });
});

describe('a 304 comes after the key and the scope, and is not counted', () => {
  test('when the tag is sent without a key, with an unknown key or with a key without pets:read, then 401 or 403, never 304', async () => {
    const pet = await insertPet(t.sql, { name: 'Guarded', categoryId: 1, status: 'available' });
    const { etag } = (await read(`/v1/pets/${pet.id}`).expect(200)).headers as { etag: string };
    await t.api.get(`/v1/pets/${pet.id}`).set('If-None-Match', etag).expect(401);
    await t.api.get(`/v1/pets/${pet.id}`).set(auth('no-such-key-0123456789')).set('If-None-Match', etag).expect(401);
    const writeOnly = (await issueKey(t, { scopes: ['pets:write'] })).key;
    await t.api.get(`/v1/pets/${pet.id}`).set(auth(writeOnly)).set('If-None-Match', etag).expect(403);
  });

  test('when a client re-reads with its tag, then each 304 leaves RateLimit as it was; a full answer spends one; a spent window is 429 even for a tag', async () => {
    const client = await issueKey(t, { scopes: ['pets:read'] });
    const as = (path: string, tag?: string) => {
      const req = t.api.get(path).set(auth(client.key));
      return tag === undefined ? req : req.set('If-None-Match', tag);
    };
    const pet = await insertPet(t.sql, { name: 'Polled', categoryId: 1, status: 'available' });
    const first = await as(`/v1/pets/${pet.id}`).expect(200);
    const left = remaining(first);
    expect(left).toBe(LIMIT - 1);
    for (let i = 0; i < LIMIT * 2; i++) {
      const res = await as(`/v1/pets/${pet.id}`, first.headers.etag).expect(304);
      // The same r (what is left); t, the seconds to the window's end, moves on.
      expect(remaining(res)).toBe(left);
      expect(res.headers['ratelimit-policy']).toBe(first.headers['ratelimit-policy']);
    }
    const page = await as('/v1/pets').expect(200);
    expect(remaining(page)).toBe(left - 1);
    await as('/v1/pets', page.headers.etag).expect(304);
    // Spend the rest: then even a request that would be a 304 is refused (the service cannot know without serving it).
    for (let i = remaining(page); i > 0; i--) await as('/v1/pets').expect(200);
    const refused = await as('/v1/pets', page.headers.etag).expect(429);
    expect(refused.body.code).toBe('rate_limited');
  });

  test('when 200 re-reads with the tag arrive at once, then none is counted: afterwards exactly what was left passes, then 429', async () => {
    const client = await issueKey(t, { scopes: ['pets:read'] });
    const as = (tag?: string) => {
      const req = t.api.get('/v1/pets').set(auth(client.key));
      return tag === undefined ? req : req.set('If-None-Match', tag);
    };
    await insertPet(t.sql, { name: 'Burst', categoryId: 1, status: 'available' });
    const first = await as().expect(200);
    const answers = await Promise.all(Array.from({ length: 200 }, () => as(first.headers.etag)));
    expect(answers.map((r) => r.status)).toEqual(Array.from({ length: 200 }, () => 304));
    // Each 304 says what was left as it was answered: at most what the first read left (others were in flight).
    expect(Math.max(...answers.map(remaining))).toBeLessThanOrEqual(remaining(first));
    // The window holds LIMIT - 1 more full answers, not one fewer and not one more.
    const rest = await Promise.all(Array.from({ length: LIMIT }, () => as()));
    expect(rest.filter((r) => r.status === 200)).toHaveLength(LIMIT - 1);
    expect(rest.filter((r) => r.status === 429)).toHaveLength(1);
  });
});
