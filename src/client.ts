/**
 * A typed client for the Animal Store API, for consumers of this package. Paths, parameters,
 * bodies and responses are the types generated from spec/openapi.yaml, so a contract change
 * that breaks callers breaks their build.
 *
 *   const store = createAnimalStoreClient({ baseUrl: 'http://127.0.0.1:3000/v1', apiKey });
 *   const { data, error } = await store.GET('/pets', { params: { query: { status: 'available' } } });
 */
import createClient, { type Client } from 'openapi-fetch';
import type { paths } from '../generated/openapi';

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
