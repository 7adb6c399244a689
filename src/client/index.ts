/**
 * A typed client for the Animal Store API, for consumers of this package. Paths, parameters,
 * bodies and responses are the types generated from spec/openapi.yaml, so a contract change
 * that breaks callers breaks their build.
 *
 *   const store = createAnimalStoreClient({ baseUrl: 'http://127.0.0.1:3000/v1', apiKey });
 *   const { data, error } = await store.GET('/pets', { params: { query: { status: 'available' } } });
 *   for await (const pet of walkPets(store, { status: 'available' })) console.log(pet.name);
 */
import createClient, { type Client } from 'openapi-fetch';
import type { components, operations, paths } from '../generated/openapi';

export type { components, operations, paths } from '../generated/openapi';
export type AnimalStoreClient = Client<paths, 'application/json'>;

export interface ClientOptions {
  /** The API root, ending in the version segment: `https://api.animal-store.example/v1`. */
  baseUrl: string;
  apiKey: string;
  /** A fetch implementation; the global fetch by default. */
  fetch?: typeof globalThis.fetch;
}

export function createAnimalStoreClient({ baseUrl, apiKey, fetch }: ClientOptions): AnimalStoreClient {
  return createClient<paths, 'application/json'>({ baseUrl, fetch, headers: { Authorization: `Bearer ${apiKey}` } });
}

/** A failed call, with the API's Error body. */
export class AnimalStoreError extends Error {
  constructor(readonly body: components['schemas']['Error']) {
    super(`${body.status} ${body.code}: ${body.message}`);
    this.name = 'AnimalStoreError';
  }
}

/**
 * The target of a `Link` header's `rel="next"` (RFC 8288 §3: `<target>; rel="next"`, one of
 * several comma-separated links, `rel` holding one or more relation types), resolved against
 * the URL of the response that carried it; undefined when there is none.
 */
export function nextLink(header: string | null, responseUrl: string): URL | undefined {
  if (!header) return undefined;
  for (const [, target = '', params = ''] of header.matchAll(/<([^>]*)>((?:\s*;\s*[^;,]+)*)/g)) {
    const rel = /;\s*rel\s*=\s*(?:"([^"]*)"|([^\s;,"]+))/i.exec(params);
    const types = (rel?.[1] ?? rel?.[2] ?? '').toLowerCase().split(/\s+/);
    if (types.includes('next')) return new URL(target, responseUrl);
  }
  return undefined;
}

type ListQuery = NonNullable<operations['listPets']['parameters']['query']>;

/**
 * Every animal of the catalogue (or of one `status`), in `id` order, page by page: it follows
 * each page's `Link: <…>; rel="next"`, until a page has none. `limit` is the page
 * size (1–100, default 20). A failed page throws AnimalStoreError.
 */
export async function* walkPets(
  client: AnimalStoreClient,
  query: Omit<ListQuery, 'cursor'> = {},
): AsyncGenerator<components['schemas']['Pet'], void, undefined> {
  // The first page's query, then each link's, whatever it holds (the server may add parameters): sent as they are.
  let params: Record<string, string | number> = { ...query };
  for (;;) {
    const { data, error, response } = await client.GET('/pets', { params: { query: params } });
    if (error) throw new AnimalStoreError(error);
    yield* data;
    // Only the link's query is read (its limit, status and cursor, unchanged) and sent to this client's
    // /pets: a proxy that serves the API under another path prefix does not lead the walk astray.
    const next = nextLink(response.headers.get('link'), response.url || 'http://response.invalid/');
    if (!next) return;
    params = Object.fromEntries(next.searchParams);
  }
}
