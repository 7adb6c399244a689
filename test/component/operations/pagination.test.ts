import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { petStatusValues } from '../../../generated/openapi';
import { createApp } from '../../../src/app';
import { withStores } from '../../../src/handlers';
import { createStores } from '../../../src/store';
import { createCursorCodec } from '../../../src/store/pets/cursors';
import {
  API_KEY,
  type Field,
  type Pet,
  auth,
  badRequest,
  captureLogs,
  contractClient,
  insertPets,
  testAppForFile,
  checkerOfFile,
} from '../../support/harness';

const t = testAppForFile();
beforeEach(() => t.sql`TRUNCATE pets RESTART IDENTITY`);

type Status = Pet['status'];
const arrange = async (
  count: number,
  status: (i: number) => Status = (i) => petStatusValues[i % 3] ?? 'available',
  category: (i: number) => number = (i) => i + 1,
) =>
  count === 0
    ? []
    : insertPets(
        t.sql,
        Array.from({ length: count }, (_, i) => ({ name: `Animal ${i}`, categoryId: category(i), status: status(i) })),
      );
/** The query of a walk's filters: `&status=…&categoryId=…`, each when set. */
const filterQuery = (status?: Status, categoryId?: number) =>
  `${status ? `&status=${status}` : ''}${categoryId === undefined ? '' : `&categoryId=${categoryId}`}`;
const kept = (status?: Status, categoryId?: number) => (p: Pet) =>
  (status === undefined || p.status === status) && (categoryId === undefined || p.categoryId === categoryId);

const NEXT = /^<([^>]+)>; rel="next"$/;

/** The next page's URL from a response's Link header, or undefined on the last page. */
function nextOf(res: { headers: Record<string, string | undefined> }): string | undefined {
  const link = res.headers.link;
  if (link === undefined) return undefined;
  const target = NEXT.exec(link)?.[1];
  if (target === undefined) throw new Error(`Link is not one rel="next": ${link}`);
  return target;
}

const query = (url: string) => Object.fromEntries(new URL(url, 'http://x').searchParams);

/**
 * Follows rel="next" from `first` to the last page; `between` runs before each next page
 * (changing the data, or the limit the client asks for). Returns every animal seen, in order.
 */
async function walk(first: string, between: (page: number, next: string) => Promise<string> | string = (_, next) => next) {
  const seen: Pet[] = [];
  let url: string | undefined = first;
  for (let page = 0; url !== undefined; page++) {
    const res = await t.api.get(url).set(auth()).expect(200);
    const limit = Number(query(url).limit ?? 20);
    expect(res.body.length).toBeLessThanOrEqual(limit);
    seen.push(...(res.body as Pet[]));
    const next = nextOf(res);
    if (next !== undefined) {
      // The next page keeps this page's limit and filter, and only adds the cursor.
      const { cursor, ...rest } = query(next);
      const { status, categoryId } = query(url);
      expect(rest).toEqual({ limit: String(limit), ...(status && { status }), ...(categoryId && { categoryId }) });
      expect(cursor).toMatch(/^[A-Za-z0-9_-]{1,64}$/);
      expect(new URL(next, 'http://x').pathname).toBe('/v1/pets');
      // A page with more after it is full.
      expect(res.body).toHaveLength(limit);
    }
    url = next === undefined ? undefined : await between(page, next);
  }
  return seen;
}

const ids = (pets: Pet[]) => pets.map((p) => p.id);
const withLimit = (url: string, limit: number) => url.replace(/([?&])limit=\d+/, `$1limit=${limit}`);

describe('listPets pages: following Link rel="next"', () => {
  test('when there are more animals than a page, then the first page carries Link rel="next" and the last none', async () => {
    const pets = await arrange(5);
    const first = await t.api.get('/v1/pets?limit=2').set(auth()).expect(200);
    expect(first.body).toEqual(pets.slice(0, 2));
    expect(first.headers.link).toMatch(/^<\/v1\/pets\?limit=2&cursor=[A-Za-z0-9_-]+>; rel="next"$/);
    // A page that holds exactly the rest is the last one: no rel="next" that leads to an empty page.
    const last = await t.api.get('/v1/pets?limit=5').set(auth()).expect(200);
    expect(last.body).toEqual(pets);
    expect(last.headers.link).toBeUndefined();
  });

  test('when no cursor is sent, then the answer is the first page as before: the array, with the default limit of 20', async () => {
    const pets = await arrange(21);
    const res = await t.api.get('/v1/pets').set(auth()).expect(200);
    expect(res.body).toEqual(pets.slice(0, 20));
    expect(nextOf(res)).toMatch(/^\/v1\/pets\?limit=20&cursor=/);
  });

  test('when HEAD asks for a page, then it carries the same Link', async () => {
    await arrange(3);
    const get = await t.api.get('/v1/pets?limit=1').set(auth()).expect(200);
    const head = await t.api.head('/v1/pets?limit=1').set(auth()).expect(200);
    expect(head.headers.link).toBe(get.headers.link);
  });

  test('when a walk follows the links, for any number of animals, limit and filters, then every animal comes once, in id order', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 0, max: 120 }),
        fc.integer({ min: 1, max: 100 }),
        fc.constantFrom<Status | undefined>(undefined, ...petStatusValues),
        fc.constantFrom<number | undefined>(undefined, 0, 1, -9007199254740991, 9007199254740991),
        fc.integer({ min: 0, max: 2 ** 31 }),
        async (count, limit, status, categoryId, seed) => {
          await t.sql`TRUNCATE pets RESTART IDENTITY`;
          // Statuses and categories spread unevenly, so that a filtered walk's pages skip runs of other animals.
          const categories = [0, 1, -9007199254740991, 9007199254740991, 1];
          const pets = await arrange(
            count,
            (i) => petStatusValues[((i * 7 + seed) % 5) % 3] ?? 'available',
            (i) => categories[((i * 3 + seed) % 7) % 5] ?? 0,
          );
          const seen = await walk(`/v1/pets?limit=${limit}${filterQuery(status, categoryId)}`);
          expect(seen).toEqual(pets.filter(kept(status, categoryId)));
        },
      ),
      { numRuns: 40 },
    );
  }, 120_000);

  test('when the client changes limit from one page to the next, then the walk still returns every animal once, in id order', async () => {
    const pets = await arrange(157);
    const limits = [1, 100, 3, 17, 50, 2, 100, 9];
    const seen = await walk('/v1/pets?limit=5', (page, next) => withLimit(next, limits[page % limits.length] as number));
    expect(seen).toEqual(pets);
    const sold = await walk('/v1/pets?status=sold&limit=4', (page, next) => withLimit(next, limits[page % limits.length] as number));
    expect(sold).toEqual(pets.filter((p) => p.status === 'sold'));
  });

  test('when animals are added and removed during a walk, then none is seen twice, the order holds, and every animal that existed throughout is seen', async () => {
    for (const [status, categoryId] of [
      [undefined, undefined],
      ['pending', undefined],
      [undefined, 2],
      ['pending', 1],
    ] as const) {
      await t.sql`TRUNCATE pets RESTART IDENTITY`;
      const before = await arrange(240, undefined, (i) => i % 3);
      const removed = new Set<number>();
      const seen = await walk(`/v1/pets?limit=9${filterQuery(status, categoryId)}`, async (page, next) => {
        // Between pages: new animals (through the API and directly), and removals on both sides of the
        // cursor, the animal the cursor stands after among them.
        await t.api
          .post('/v1/pets')
          .set(auth())
          .send({ name: `Added ${page}`, categoryId: page % 3, status: 'pending' })
          .expect(201);
        await insertPets(t.sql, [{ name: `Inserted ${page}`, categoryId: page % 3, status: 'pending' }]);
        const [lastSeen] = await t.sql<{ id: number }[]>`SELECT max(id)::int AS id FROM pets WHERE id <= ${page * 9 + 9}`;
        const victims = await t.sql<{ id: number }[]>`
          DELETE FROM pets WHERE id IN (${lastSeen?.id ?? 0}, ${page * 13 + 100}, ${page * 5 + 1}) RETURNING id::int AS id`;
        victims.forEach((v) => removed.add(v.id));
        return next;
      });
      expect(new Set(ids(seen)).size).toBe(seen.length);
      expect(ids(seen)).toEqual([...ids(seen)].sort((a, b) => a - b));
      const throughout = before.filter((p) => !removed.has(p.id) && kept(status, categoryId)(p));
      expect(throughout.length).toBeGreaterThan(20);
      expect(ids(seen)).toEqual(expect.arrayContaining(ids(throughout)));
      expect(seen.every(kept(status, categoryId))).toBe(true);
    }
  });

  test('when creates run concurrently with a walk, then none is seen twice and every animal that existed throughout is seen', async () => {
    const before = await arrange(300);
    let writing = true;
    const writer = (async () => {
      for (let i = 0; writing; i++)
        await t.api
          .post('/v1/pets')
          .set(auth())
          .send({ name: `Concurrent ${i}`, categoryId: i })
          .expect(201);
    })();
    const seen = await walk('/v1/pets?limit=7');
    writing = false;
    await writer;
    expect(new Set(ids(seen)).size).toBe(seen.length);
    expect(ids(seen)).toEqual([...ids(seen)].sort((a, b) => a - b));
    expect(ids(seen)).toEqual(expect.arrayContaining(ids(before)));
  });

  test('when a cursor comes from another instance of the service on the same database, then it is accepted', async () => {
    await arrange(9);
    const first = await t.api.get('/v1/pets?limit=2&status=available').set(auth()).expect(200);
    const other = await createApp({
      spec: t.spec,
      handlers: withStores(createStores(t.sql, { idempotencyTtlSeconds: 60 })),
      bootstrapKeys: [API_KEY],
      logging: captureLogs('silent').logging,
    });
    const api = contractClient(other, await checkerOfFile());
    const second = await api
      .get(nextOf(first) as string)
      .set(auth())
      .expect(200);
    expect(ids(second.body)).toEqual(
      ids(await t.sql<Pet[]>`SELECT id::int AS id FROM pets WHERE status = 'available' ORDER BY id OFFSET 2`),
    );
  });
});

describe('listPets pages: a cursor the service did not issue for this walk is refused with 400', () => {
  let cursors: { none: string; sold: string; pending: string };
  beforeEach(async () => {
    await arrange(12);
    const cursorOf = async (url: string) => query(nextOf(await t.api.get(url).set(auth()).expect(200)) as string).cursor as string;
    cursors = {
      none: await cursorOf('/v1/pets?limit=1'),
      sold: await cursorOf('/v1/pets?limit=1&status=sold'),
      pending: await cursorOf('/v1/pets?limit=1&status=pending'),
    };
  });

  /** A 400 naming the cursor and the rule it broke: by default, not one this service issued. */
  const refused = async (q: string, message: string | RegExp, rules = [message === NOT_ISSUED ? 'cursor' : 'cursorFilter']) => {
    const res = await t.api.get(`/v1/pets?${q}`).set(auth()).expect(400);
    const fields = rules.map((rule): Field => ['query', 'cursor', rule]);
    expect(res.body).toEqual(badRequest('validation_failed', expect.stringMatching(message), fields));
    expect(res.body.message).toContain("query parameter 'cursor'");
    return res;
  };
  const NOT_ISSUED = /^query parameter 'cursor' is not a cursor this service issued: follow the previous page's Link rel="next" as given$/;
  const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

  test('when any one character of a cursor is changed, then 400', async () => {
    const { none } = cursors;
    for (let i = 0; i < none.length; i++) {
      // Each position, to a character whose bits differ from the original's (the last character's spare bits too).
      for (const replacement of [
        ALPHABET[(ALPHABET.indexOf(none[i] as string) + 1) % 64],
        ALPHABET[(ALPHABET.indexOf(none[i] as string) + 32) % 64],
      ]) {
        await refused(`cursor=${none.slice(0, i)}${replacement}${none.slice(i + 1)}`, NOT_ISSUED);
      }
    }
  });

  test('when a cursor is truncated or extended, then 400', async () => {
    const { sold } = cursors;
    for (let n = 1; n < sold.length; n++) await refused(`status=sold&cursor=${sold.slice(0, n)}`, NOT_ISSUED);
    await refused(`status=sold&cursor=${sold}A`, NOT_ISSUED);
    await refused(`status=sold&cursor=${sold}${sold}`.slice(0, 64 + 'status=sold&cursor='.length), NOT_ISSUED);
  });

  test('when a cursor is invented, then 400 and never 500', async () => {
    await fc.assert(
      fc.asyncProperty(fc.stringMatching(/^[A-Za-z0-9_-]{1,64}$/), async (invented) => {
        await refused(`cursor=${invented}`, NOT_ISSUED);
      }),
      { numRuns: 100 },
    );
  });

  test('when a cursor is forged with the right format but not the service key (another key, or a copied tag), then 400', async () => {
    const stranger = createCursorCodec(randomBytes(32));
    await refused(`cursor=${stranger.encode({ afterId: 3, status: undefined })}`, NOT_ISSUED);
    await refused(`status=sold&cursor=${stranger.encode({ afterId: 3, status: 'sold' })}`, NOT_ISSUED);
    // The genuine cursor's bytes with its position moved and its tag kept.
    const bytes = Buffer.from(cursors.none, 'base64url');
    expect(bytes.readBigUInt64BE(2)).toBe(BigInt(1));
    bytes.writeBigUInt64BE(BigInt(5), 2);
    await refused(`cursor=${bytes.toString('base64url')}`, NOT_ISSUED);
    // Its filter swapped for another, tag kept.
    const sold = Buffer.from(cursors.sold, 'base64url');
    sold.write('pend', 2, 'latin1');
    await refused(`status=sold&cursor=${sold.toString('base64url')}`, NOT_ISSUED);
  });

  test('when a cursor made for one status filter is sent with another, or with none, then 400 names the filter and no animal of the other filter comes back', async () => {
    await refused(`status=available&cursor=${cursors.sold}`, /was issued for a walk with status=sold/);
    await refused(`cursor=${cursors.sold}`, /was issued for a walk with status=sold/);
    await refused(`status=pending&cursor=${cursors.none}`, /was issued for a walk without a filter/);
    await refused(`status=sold&cursor=${cursors.pending}`, /was issued for a walk with status=pending/);
    // The same cursors with their own filters are accepted.
    await t.api.get(`/v1/pets?status=sold&cursor=${cursors.sold}`).set(auth()).expect(200);
    await t.api.get(`/v1/pets?cursor=${cursors.none}`).set(auth()).expect(200);
  });

  test('when a cursor made for a category (with or without a status) is sent with another category, another status, or none, then 400 names its filters', async () => {
    await t.sql`UPDATE pets SET category_id = id % 2`;
    const cursorOf = async (url: string) => query(nextOf(await t.api.get(url).set(auth()).expect(200)) as string).cursor as string;
    const one = await cursorOf('/v1/pets?limit=1&categoryId=1');
    const soldOne = await cursorOf('/v1/pets?limit=1&categoryId=1&status=sold');
    await refused(`categoryId=0&cursor=${one}`, /was issued for a walk with categoryId=1:/);
    await refused(`cursor=${one}`, /was issued for a walk with categoryId=1:/);
    await refused(`categoryId=1&status=sold&cursor=${one}`, /was issued for a walk with categoryId=1:/);
    await refused(`categoryId=1&cursor=${soldOne}`, /was issued for a walk with status=sold and categoryId=1:/);
    await refused(`categoryId=1&cursor=${cursors.none}`, /was issued for a walk without a filter:/);
    await t.api.get(`/v1/pets?categoryId=1&status=sold&cursor=${soldOne}`).set(auth()).expect(200);
    // A category cursor's bytes with its category changed, its tag kept.
    const bytes = Buffer.from(one, 'base64url');
    bytes.writeBigInt64BE(BigInt(0), 2);
    await refused(`categoryId=0&cursor=${bytes.toString('base64url')}`, NOT_ISSUED);
  });

  test.each([
    ['empty', 'cursor=', "query parameter 'cursor' must NOT have fewer than 1 characters"],
    ['longer than 64', `cursor=${'A'.repeat(65)}`, "query parameter 'cursor' must NOT have more than 64 characters"],
    ['with characters outside base64url', 'cursor=AQ%2BA%2F%3D', "query parameter 'cursor' must match the pattern"],
    ['with a NUL', 'cursor=AQ%00A', "query parameter 'cursor' must match the pattern"],
    ['twice', 'cursor=AQAA&cursor=AQAB', "query parameter 'cursor' must be string"],
    ['JSON inside it', `cursor=${encodeURIComponent('{"afterId":1}')}`, "query parameter 'cursor' must match the pattern"],
  ])('when the cursor is %s, then 400 names the parameter and the rule', async (_what, q, message) => {
    // An empty cursor breaks its pattern too (one character or more).
    const rules = /fewer/.test(message)
      ? ['minLength', 'pattern']
      : /more than/.test(message)
        ? ['maxLength']
        : /string/.test(message)
          ? ['type']
          : ['pattern'];
    await refused(q, new RegExp(message.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')), rules);
  });

  test('when the key is missing, then 401 comes before the cursor is looked at', async () => {
    const res = await t.api.get('/v1/pets?cursor=nonsense').expect(401);
    expect(res.body.code).toBe('unauthorized');
  });
});
