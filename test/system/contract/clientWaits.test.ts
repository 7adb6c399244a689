import { createAnimalStoreClient } from '../../../src/client';
import { clientTestbed, failure } from '../../support/clientTestbed';
import { API_KEY, listenOnLoopback, startTestApp } from '../../support/harness';
import type { HttpFaultProxy } from '../../support/httpFaults';

// The client waiting out the Retry-After a server sends, in whole seconds of the wall clock: the
// rest of its retry rules, which wait milliseconds, are test/component/contract/clientRetries.test.ts.
const gaps = (proxy: HttpFaultProxy) => proxy.seen.slice(1).map((s, i) => s.at - proxy.seen[i]!.at);

describe('Retry-After, waited out', () => {
  const { clientWith } = clientTestbed();

  test('when a read is answered 429 with Retry-After: 1, then the client waits one second before its next attempt', async () => {
    const { proxy, store } = await clientWith(['answer-429'], 'forward', { retryAfter: '1' });
    const page = await store.listPets();
    expect(page.meta.attempts).toBe(2);
    const [gap] = gaps(proxy);
    expect(gap).toBeGreaterThanOrEqual(1_000);
    expect(gap).toBeLessThan(1_400);
  });

  test('when Retry-After is an HTTP date two seconds ahead, then the client waits until that second', async () => {
    const { proxy, store } = await clientWith(['answer-429'], 'forward', { retryAfter: () => new Date(Date.now() + 2_000).toUTCString() });
    await store.listPets();
    // An HTTP date counts whole seconds: the wait ends within the second it names.
    const [gap] = gaps(proxy);
    expect(gap).toBeGreaterThanOrEqual(1_000);
    expect(gap).toBeLessThan(2_400);
  });
});

// An app of its own, which the embedded database serves only while no other app of the file is open.
describe("Retry-After, waited out: the server's own", () => {
  test("when the server's own rate limit refuses a read, then the client waits as its Retry-After says and gets the page", async () => {
    const limited = await startTestApp({ rateLimit: { requests: 1, windowSeconds: 1 } });
    const served = await listenOnLoopback(limited.app);
    try {
      const store = createAnimalStoreClient({ baseUrl: `${served.origin}/v1`, apiKey: API_KEY });
      // The limit counts per second of the clock: both reads start early in the same second, or the
      // second read would find a fresh window and no 429 to wait out.
      await new Promise((resolve) => setTimeout(resolve, 1_020 - (Date.now() % 1_000)));
      await store.listPets();
      const started = Date.now();
      const second = await store.listPets();
      expect(second.meta.attempts).toBeGreaterThanOrEqual(2);
      expect(second.meta.rateLimit).toMatch(/^"per-key";r=\d+;t=\d+$/);
      expect(Date.now() - started).toBeLessThan(2_500);
    } finally {
      await served.close();
      await limited.close();
    }
  });
});

describe('the time budget, against Retry-After', () => {
  const { clientWith } = clientTestbed();

  test('when every attempt is answered 429 with Retry-After: 1 and the budget is 2.5 s, then the client stops before it would overrun', async () => {
    const { proxy, store } = await clientWith([], 'answer-429', { retry: { maxAttempts: 10, budgetMs: 2_500 }, retryAfter: '1' });
    const started = Date.now();
    const err = await failure(store.listPets());
    expect(err).toMatchObject({ code: 'rate_limited', meta: { attempts: 3 } });
    expect(proxy.seen).toHaveLength(3);
    expect(Date.now() - started).toBeLessThan(2_500);
  });
});
