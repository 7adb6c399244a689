/**
 * The store of the benchmark's baselines and alternatives: one plain statement per operation, as
 * postgres.js's README shows it, on the pool `serve.ts` opens with postgres.js as npm publishes it
 * today, and nothing of the product's store (src/store/) but the contract's cursor format:
 *
 * - create: `INSERT … RETURNING`, on its own (autocommit): one round trip.
 * - get: `SELECT … WHERE id = $1`.
 * - list: keyset paging, `SELECT … WHERE [status = $1 AND] id > $after ORDER BY id LIMIT n + 1`,
 *   the one extra row saying whether a next page follows. The cursor is the contract's (an
 *   HMAC-signed position, `createCursorCodec`, with the key the product's migration stored), so
 *   that a page's `Link` is the product's to the byte and an altered cursor is refused the same way:
 *   what a user keeping the contract's "cursors are opaque and checked" would write, an HMAC per page.
 *
 * No deadline, no transaction, no idempotency, no commit resolution: what a user of these
 * libraries gets by following their documentation.
 */
import type { components } from '../../generated/openapi';
import { InvalidCursorError, type PetFilter, type PetPage, createCursorCodec } from './shared';

type Pet = components['schemas']['Pet'];
type NewPet = components['schemas']['NewPet'];

export interface PlainStore {
  list(filter: PetFilter): Promise<PetPage>;
  create(pet: NewPet): Promise<Pet>;
  get(id: number): Promise<Pet | undefined>;
}

/**
 * What the store asks of its pool: postgres.js's tagged template, which its versions share. The
 * bench's pool is the one serve.ts opens; the bench's test gives the product's pool, as Jest cannot
 * load the published driver (an ES module only, since 4.0) without its experimental VM modules.
 */
export type PlainSql = <T extends readonly object[]>(template: TemplateStringsArray, ...values: (string | number)[]) => Promise<T>;

export async function createPlainStore(sql: PlainSql): Promise<PlainStore> {
  const [key] = await sql<{ secret: Buffer }[]>`SELECT secret FROM signing_keys WHERE purpose = 'page-cursor'`;
  if (!key) throw new Error('no page-cursor signing key: migrate the database first');
  const cursors = createCursorCodec(key.secret);
  return {
    async list({ limit, status, cursor }) {
      let afterId = 0;
      if (cursor !== undefined) {
        const position = cursors.decode(cursor);
        if (!position) throw new InvalidCursorError();
        if (position.status !== status) throw new InvalidCursorError({ status: position.status });
        afterId = position.afterId;
      }
      const rows =
        status === undefined
          ? await sql<Pet[]>`
              SELECT id, name, category_id AS "categoryId", status FROM pets
              WHERE id > ${afterId} ORDER BY id LIMIT ${limit + 1}`
          : await sql<Pet[]>`
              SELECT id, name, category_id AS "categoryId", status FROM pets
              WHERE status = ${status} AND id > ${afterId} ORDER BY id LIMIT ${limit + 1}`;
      if (rows.length <= limit) return { pets: rows, next: undefined };
      const pets = rows.slice(0, limit);
      return { pets, next: cursors.encode({ afterId: (pets[pets.length - 1] as Pet).id, status }) };
    },
    async create({ name, categoryId, status }) {
      const [pet] = await sql<Pet[]>`
        INSERT INTO pets (name, category_id, status) VALUES (${name}, ${categoryId}, ${status ?? 'available'})
        RETURNING id, name, category_id AS "categoryId", status`;
      return pet as Pet;
    },
    async get(id) {
      const [pet] = await sql<Pet[]>`SELECT id, name, category_id AS "categoryId", status FROM pets WHERE id = ${id}`;
      return pet;
    },
  };
}

/**
 * One page as the contract answers it: the animals, and when more follow, `Link` (RFC 8288)
 * naming the next page with this page's limit, filter and cursor, as a path on the same origin.
 */
export async function listPage(
  pets: Pick<PlainStore, 'list'>,
  filter: PetFilter,
  requestPath: string,
): Promise<{ status: 200; body: Pet[]; headers?: Record<string, string> }> {
  const page = await pets.list(filter);
  if (page.next === undefined) return { status: 200, body: page.pets };
  const next = new URLSearchParams({ limit: String(filter.limit) });
  if (filter.status) next.set('status', filter.status);
  if (filter.categoryId !== undefined) next.set('categoryId', String(filter.categoryId));
  next.set('cursor', page.next);
  return { status: 200, body: page.pets, headers: { Link: `<${requestPath}?${next.toString()}>; rel="next"` } };
}
