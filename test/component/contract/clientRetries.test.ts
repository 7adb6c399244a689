import { AnimalStoreError, createAnimalStoreClient, retryAfterMs } from '../../../src/client';
import { clientTestbed, failure } from '../../support/clientTestbed';
import { API_KEY, listenOnLoopback, startTestApp } from '../../support/harness';
import type { HttpFaultProxy } from '../../support/httpFaults';

// When the client tries again, and when it stops: Retry-After, backoff, the attempt count and
// the time budget, timeouts and the caller's abort, counted at a proxy in front of the real app.
const { clientWith } = clientTestbed();
const gaps = (proxy: HttpFaultProxy) => proxy.seen.slice(1).map((s, i) => s.at - proxy.seen[i]!.at);

describe('Retry-After', () => {
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

  test('when Retry-After is longer than maxRetryAfterMs, then the client stops at once with the wait in its error', async () => {
    const { proxy, store } = await clientWith([], 'answer-429', { retry: { maxRetryAfterMs: 5_000 }, retryAfter: '120' });
    const err = await failure(store.listPets());
    expect(err).toBeInstanceOf(AnimalStoreError);
    expect(err).toMatchObject({ code: 'rate_limited', status: 429, retryAfter: 120, meta: { attempts: 1 } });
    expect(proxy.seen).toHaveLength(1);
  });

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

  test.each([
    ['1', 1_000],
    [' 30 ', 30_000],
    ['Wed, 21 Oct 2015 07:28:00 GMT', 2_000],
    ['Wed, 21 Oct 2015 07:27:00 GMT', 0],
    ['soon', undefined],
    ['-1', undefined],
    ['Sunday, 06-Nov-94 08:49:37 GMT', 0],
    ['', undefined],
  ])('when Retry-After is %j (now 07:27:58 GMT), then the wait is %s ms', (header, expected) => {
    expect(retryAfterMs(header, Date.parse('Wed, 21 Oct 2015 07:27:58 GMT'))).toBe(expected);
  });
});

describe('the attempt count and the time budget', () => {
  test('when every attempt is answered 503, then the client makes maxAttempts and throws the last Error body with their count', async () => {
    const { proxy, store } = await clientWith([], 'answer-503', { retry: { maxAttempts: 3 } });
    const err = await failure(store.listPets());
    expect(err).toMatchObject({ code: 'service_unavailable', status: 503, meta: { attempts: 3 } });
    expect(proxy.seen).toHaveLength(3);
  });

  test('when every attempt is answered 429 with Retry-After: 1 and the budget is 2.5 s, then the client stops before it would overrun', async () => {
    const { proxy, store } = await clientWith([], 'answer-429', { retry: { maxAttempts: 10, budgetMs: 2_500 }, retryAfter: '1' });
    const started = Date.now();
    const err = await failure(store.listPets());
    expect(err).toMatchObject({ code: 'rate_limited', meta: { attempts: 3 } });
    expect(proxy.seen).toHaveLength(3);
    expect(Date.now() - started).toBeLessThan(2_500);
  });

  test('when every connection is cut, then the client throws network_error with status 0 and the attempt count', async () => {
    const { proxy, store } = await clientWith([], 'cut-after-answer', { retry: { maxAttempts: 4 } });
    const err = await failure(store.listPets());
    expect(err).toMatchObject({ code: 'network_error', status: 0, meta: { attempts: 4 } });
    expect(err.body).toBeUndefined();
    expect(proxy.seen).toHaveLength(4);
  });

  test('when the backoff runs, then each wait stays under its exponential ceiling', async () => {
    const { proxy, store } = await clientWith([], 'answer-503', { retry: { maxAttempts: 6, baseDelayMs: 40, maxDelayMs: 200 } });
    await failure(store.listPets());
    const ceilings = [40, 80, 160, 200, 200];
    gaps(proxy).forEach((gap, i) => expect(gap).toBeLessThan(ceilings[i]! + 60));
  });
});

describe('timeouts and aborts', () => {
  test('when an attempt gets no answer within attemptTimeoutMs, then it is abandoned and the next attempt gets the page', async () => {
    const { proxy, store } = await clientWith(['stall'], 'forward', { retry: { attemptTimeoutMs: 300 } });
    const started = Date.now();
    const page = await store.listPets();
    expect(page.meta.attempts).toBe(2);
    // Timed by the caller: the attempt's clock starts before its request reaches the proxy.
    expect(Date.now() - started).toBeGreaterThanOrEqual(300);
    expect(proxy.seen.map((s) => s.fault)).toEqual(['stall', 'forward']);
  });

  test('when every attempt times out, then the client throws timeout', async () => {
    const { store } = await clientWith([], 'stall', { retry: { attemptTimeoutMs: 150, maxAttempts: 2 } });
    expect(await failure(store.listPets())).toMatchObject({ code: 'timeout', status: 0, meta: { attempts: 2 } });
  });

  test('when the caller aborts during a wait between attempts, then the call rejects at once with the abort and tries no more', async () => {
    const { proxy, store } = await clientWith([], 'answer-429', { retryAfter: '10' });
    const started = Date.now();
    const err = await failure(store.listPets({}, { signal: AbortSignal.timeout(200) }));
    expect((err as unknown as Error).name).toBe('TimeoutError');
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(proxy.seen).toHaveLength(1);
  });

  test('when the caller aborts an attempt in flight, then the call rejects with the abort and is not retried', async () => {
    const { proxy, store } = await clientWith([], 'stall');
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error('the caller gave up')), 100);
    const err = await failure(store.getPet(1, { signal: controller.signal }));
    expect((err as unknown as Error).message).toBe('the caller gave up');
    expect(proxy.seen).toHaveLength(1);
  });
});
