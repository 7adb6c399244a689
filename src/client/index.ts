/**
 * The Animal Store API's client, for consumers of this package: typed by `generated/` only,
 * fetch only (Node and browsers). Each call keeps the server's promises for its caller:
 *
 *   const store = createAnimalStoreClient({ baseUrl: 'http://127.0.0.1:3000/v1', apiKey });
 *   const { pet, replayed } = await store.createPet({ name: 'Rex', categoryId: 1 });
 *   for await (const pet of store.walkPets({ status: 'available' })) console.log(pet.name);
 *
 * Reads are retried after network failures, 429, 502, 503 and 504 (honouring `Retry-After`,
 * otherwise backing off with full jitter), within an attempt count and a time budget; a create
 * sends one `Idempotency-Key` for all its attempts, so it is made once or replayed. Failures
 * throw AnimalStoreError. The openapi-fetch methods (`GET`, `POST`, …) stay available and
 * retry the same way, without throwing.
 */
import createClient, { type Client } from 'openapi-fetch';
import type { components, operations, paths } from '../../generated/openapi';
import { AnimalStoreError, type ResponseMeta, errorFrom, metaOf } from './errors';
import { type DeprecationNotice, deprecationOf, nextLink, warnOnce } from './links';
import { DEFAULT_RETRY_POLICY, type RetryEvent, type RetryPolicy, attemptsFor, retryingFetch, urlOf } from './retry';

export type { components, operations, paths } from '../../generated/openapi';
export { AnimalStoreError, type ResponseMeta } from './errors';
export { type DeprecationNotice, linkTarget, nextLink } from './links';
export { DEFAULT_RETRY_POLICY, type RetryEvent, type RetryPolicy, retryAfterMs } from './retry';

export type Pet = components['schemas']['Pet'];
export type NewPet = components['schemas']['NewPet'];
export type ListQuery = NonNullable<operations['listPets']['parameters']['query']>;

export interface ClientOptions {
  /** The API root, ending in the version segment: `https://api.animal-store.example/v1`. */
  baseUrl: string;
  apiKey: string;
  /** A fetch implementation; the global fetch by default. */
  fetch?: typeof globalThis.fetch;
  /** How calls are retried; each member defaults to DEFAULT_RETRY_POLICY's. */
  retry?: Partial<RetryPolicy>;
  /** Called with every answer that carries `Deprecation` or `Sunset` (default: one console warning per operation). */
  onDeprecation?: (notice: DeprecationNotice) => void;
  /** Called before each wait between attempts, with the attempt that failed and the wait chosen: for a caller's logs or metrics. */
  onRetry?: (retry: RetryEvent) => void;
}

export interface CallOptions {
  /** Ends the call (its attempt or its wait) at once; the call rejects with the signal's reason. */
  signal?: AbortSignal;
}

/** A read that may be answered "unchanged": the `etag` of the representation held, sent as `If-None-Match`. */
export interface ConditionalOptions extends CallOptions {
  ifNoneMatch: string;
}

/** A conditional read's answer when what the caller holds is still current (304): nothing to read, not counted by the rate limit. */
export interface Unchanged {
  unchanged: true;
  etag: string;
  meta: ResponseMeta;
}

export interface Page {
  unchanged: false;
  pets: Pet[];
  /** The next page's `cursor` (from its `Link: rel="next"`); undefined on the last page. */
  next?: string;
  /** The page's ETag: pass it as `ifNoneMatch` to a later listPets with the same query to learn whether it changed. */
  etag: string | undefined;
  meta: ResponseMeta;
}

export interface PetRead {
  unchanged: false;
  pet: Pet;
  /** The animal's ETag: pass it as `ifNoneMatch` to a later getPet to learn whether it changed. */
  etag: string | undefined;
  meta: ResponseMeta;
}

export interface Created {
  pet: Pet;
  /** True when the server replayed the first answer of this `Idempotency-Key` (the animal was made by an earlier attempt or call). */
  replayed: boolean;
  /** The key the create was sent with: pass it to a later createPet to learn what became of this one. */
  idempotencyKey: string;
  meta: ResponseMeta;
}

export interface AnimalStoreClient extends Client<paths, 'application/json'> {
  /** One page of the catalogue (listPets); with `ifNoneMatch`, Unchanged when the page is still the one of that ETag. */
  listPets(query: ListQuery, options: ConditionalOptions): Promise<Page | Unchanged>;
  listPets(query?: ListQuery, options?: CallOptions): Promise<Page>;
  /** Every animal (of a `status`), page by page in `id` order, following each page's link; each page retried as any read. */
  walkPets(query?: Omit<ListQuery, 'cursor'>, options?: CallOptions): AsyncGenerator<Pet, void, undefined>;
  /** One animal (getPet: deprecated; its notice goes to `onDeprecation`); with `ifNoneMatch`, Unchanged when it still is. */
  getPet(petId: number, options: ConditionalOptions): Promise<PetRead | Unchanged>;
  getPet(petId: number, options?: CallOptions): Promise<PetRead>;
  /** Adds an animal exactly once: every attempt carries the same `Idempotency-Key` (a new random one unless given). */
  createPet(pet: NewPet, options?: CallOptions & { idempotencyKey?: string }): Promise<Created>;
}

/** 128 random bits as hex: `crypto.getRandomValues` works in every browser context (randomUUID needs a secure one). */
export function newIdempotencyKey(): string {
  return Array.from(globalThis.crypto.getRandomValues(new Uint8Array(16)), (b) => b.toString(16).padStart(2, '0')).join('');
}

type Answer = { data?: unknown; error?: unknown; response: Response };
/** The answer's data, or the AnimalStoreError its failure gives. */
function dataOf<T>({ data, error, response }: Answer): T {
  if (error !== undefined || !response.ok) throw errorFrom(error, response, attemptsFor(response));
  return data as T;
}

/** A 304 (openapi-fetch reads it as a failure with no body): what the caller holds is current. */
function unchangedOf({ response }: Answer, sent: string | undefined): Unchanged | undefined {
  if (response.status !== 304 || sent === undefined) return undefined;
  return { unchanged: true, etag: response.headers.get('etag') ?? sent, meta: metaOf(response, attemptsFor(response)) };
}

export function createAnimalStoreClient(options: ClientOptions): AnimalStoreClient {
  const policy = { ...DEFAULT_RETRY_POLICY, ...options.retry };
  const onDeprecation = options.onDeprecation ?? warnOnce;
  const api = createClient<paths, 'application/json'>({
    baseUrl: options.baseUrl,
    fetch: retryingFetch(policy, options.fetch ?? ((input, init) => globalThis.fetch(input, init)), options.onRetry),
    headers: { Authorization: `Bearer ${options.apiKey}` },
  });
  api.use({
    onResponse({ request, response, schemaPath }) {
      const notice = deprecationOf(`${request.method} ${schemaPath}`, response, urlOf(response));
      if (notice) onDeprecation(notice);
    },
  });

  /**
   * A page for any query the API gives (a link's query is sent as it is: the server may add to it),
   * with the next page's link. Only the link's query is read (its limit, status and cursor) and sent to
   * this client's /pets: a proxy that serves the API under another path prefix does not lead a walk astray.
   */
  const page = async (
    query: Record<string, string | number>,
    { signal, ifNoneMatch }: Partial<ConditionalOptions> = {},
  ): Promise<(Page & { link?: URL }) | Unchanged> => {
    const header = ifNoneMatch === undefined ? {} : { 'If-None-Match': ifNoneMatch };
    const answer = await api.GET('/pets', { params: { query, header }, signal });
    const unchanged = unchangedOf(answer, ifNoneMatch);
    if (unchanged) return unchanged;
    const pets = dataOf<Pet[]>(answer);
    const link = nextLink(answer.response.headers.get('link'), urlOf(answer.response));
    const meta = metaOf(answer.response, attemptsFor(answer.response));
    const etag = answer.response.headers.get('etag') ?? undefined;
    return { unchanged: false, pets, next: link?.searchParams.get('cursor') ?? undefined, etag, meta, link };
  };

  return {
    ...api,
    listPets: (async (query: ListQuery = {}, options: Partial<ConditionalOptions> = {}) => {
      const got = await page(query, options);
      if (got.unchanged) return got;
      const { link: _link, ...read } = got;
      return read;
    }) as AnimalStoreClient['listPets'],
    async *walkPets(query = {}, { signal } = {}) {
      for (let params: Record<string, string | number> | undefined = { ...query }; params;) {
        const got = await page(params, { signal });
        // Sent without If-None-Match: never unchanged.
        if (got.unchanged) throw new Error('a page sent without If-None-Match was answered 304');
        yield* got.pets;
        params = got.link && Object.fromEntries(got.link.searchParams);
      }
    },
    getPet: (async (petId: number, { signal, ifNoneMatch }: Partial<ConditionalOptions> = {}) => {
      const header = ifNoneMatch === undefined ? {} : { 'If-None-Match': ifNoneMatch };
      const answer = await api.GET('/pets/{petId}', { params: { path: { petId }, header }, signal });
      const unchanged = unchangedOf(answer, ifNoneMatch);
      if (unchanged) return unchanged;
      const { response } = answer;
      return {
        unchanged: false,
        pet: dataOf<Pet>(answer),
        etag: response.headers.get('etag') ?? undefined,
        meta: metaOf(response, attemptsFor(response)),
      };
    }) as AnimalStoreClient['getPet'],
    async createPet(pet, { signal, idempotencyKey = newIdempotencyKey() } = {}) {
      try {
        const answer = await api.POST('/pets', { body: pet, params: { header: { 'Idempotency-Key': idempotencyKey } }, signal });
        const { response } = answer;
        const replayed = response.headers.get('idempotent-replayed') === 'true';
        return { pet: dataOf<Pet>(answer), replayed, idempotencyKey, meta: metaOf(response, attemptsFor(response)) };
      } catch (err) {
        if (err instanceof AnimalStoreError) err.idempotencyKey = idempotencyKey;
        throw err;
      }
    },
  };
}

/** Every animal (of a `status`), page by page: `client.walkPets(query)`. */
export function walkPets(client: AnimalStoreClient, query: Omit<ListQuery, 'cursor'> = {}): AsyncGenerator<Pet, void, undefined> {
  return client.walkPets(query);
}
