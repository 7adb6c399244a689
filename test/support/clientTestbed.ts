import type { IncomingMessage } from 'node:http';
import {
  type AnimalStoreClient,
  type AnimalStoreError,
  type RetryEvent,
  type RetryPolicy,
  createAnimalStoreClient,
} from '../../src/client';
import { API_KEY, type TestApp, listenOnLoopback, startTestApp } from './harness';
import { type HttpFault, type HttpFaultProxy, httpFaultProxy } from './httpFaults';

export interface ClientTestbed {
  /** The app on a database of its own (from beforeAll on). */
  app: () => TestApp;
  /** Where it listens on the loopback interface. */
  origin: () => string;
  /**
   * The package's client through a fault proxy in front of the app: the n-th request (from 0)
   * gets the n-th fault of `faults`, the rest get `then`. Retries wait 10 ms at first unless told;
   * `retries` lists each one as the client reports it (onRetry), with the wait it chose.
   */
  clientWith: (
    faults: HttpFault[],
    then?: HttpFault,
    options?: { apiKey?: string; retry?: Partial<RetryPolicy>; retryAfter?: string | (() => string) },
  ) => Promise<{ proxy: HttpFaultProxy; store: AnimalStoreClient; retries: RetryEvent[] }>;
}

/** An app and fault proxies for a test file of the client, with the hooks that start and stop them. */
export function clientTestbed(): ClientTestbed {
  let t: TestApp;
  let api: Awaited<ReturnType<typeof listenOnLoopback>>;
  const proxies: HttpFaultProxy[] = [];
  beforeAll(async () => {
    t = await startTestApp();
    api = await listenOnLoopback(t.app);
  });
  afterEach(async () => {
    await Promise.all(proxies.splice(0).map((p) => p.close()));
  });
  afterAll(async () => {
    await api.close();
    await t.close();
  });
  return {
    app: () => t,
    origin: () => api.origin,
    clientWith: async (faults, then = 'forward', { apiKey = API_KEY, retry, retryAfter } = {}) => {
      const proxy = await httpFaultProxy(api.origin, (_req: IncomingMessage, i) => faults[i] ?? then, { retryAfter });
      proxies.push(proxy);
      const retries: RetryEvent[] = [];
      const store = createAnimalStoreClient({
        baseUrl: `${proxy.origin}/v1`,
        apiKey,
        retry: { baseDelayMs: 10, ...retry },
        onDeprecation: () => {},
        onRetry: (r) => retries.push(r),
      });
      return { proxy, store, retries };
    },
  };
}

/** The error a call rejects with; the test fails when the call succeeds. */
export const failure = (promise: Promise<unknown>): Promise<AnimalStoreError> =>
  promise.then(
    () => {
      throw new Error('the call succeeded');
    },
    (err: unknown) => err as AnimalStoreError,
  );
