import { AnimalStoreError, type RetryEvent, retryAfterMs } from '../../../src/client';
import { clientTestbed, failure } from '../../support/clientTestbed';
import type { HttpFaultProxy } from '../../support/httpFaults';

// When the client tries again, and when it stops: Retry-After, backoff, the attempt count and
// the time budget, timeouts and the caller's abort, counted at a proxy in front of the real app.
// The cases that wait out a Retry-After of whole seconds are test/system/contract/clientWaits.test.ts.
const { clientWith } = clientTestbed();
const gaps = (proxy: HttpFaultProxy) => proxy.seen.slice(1).map((s, i) => s.at - proxy.seen[i]!.at);

describe('Retry-After', () => {
  test('when Retry-After is longer than maxRetryAfterMs, then the client stops at once with the wait in its error', async () => {
    const { proxy, store } = await clientWith([], 'answer-429', { retry: { maxRetryAfterMs: 5_000 }, retryAfter: '120' });
    const err = await failure(store.listPets());
    expect(err).toBeInstanceOf(AnimalStoreError);
    expect(err).toMatchObject({ code: 'rate_limited', status: 429, retryAfter: 120, meta: { attempts: 1 } });
    expect(proxy.seen).toHaveLength(1);
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

  test('when every connection is cut, then the client throws network_error with status 0 and the attempt count', async () => {
    const { proxy, store } = await clientWith([], 'cut-after-answer', { retry: { maxAttempts: 4 } });
    const err = await failure(store.listPets());
    expect(err).toMatchObject({ code: 'network_error', status: 0, meta: { attempts: 4 } });
    expect(err.body).toBeUndefined();
    expect(proxy.seen).toHaveLength(4);
  });

  test('when the backoff runs, then each wait is chosen under its exponential ceiling, and the client waits it out', async () => {
    const { proxy, store, retries } = await clientWith([], 'answer-503', { retry: { maxAttempts: 6, baseDelayMs: 40, maxDelayMs: 200 } });
    await failure(store.listPets());
    const ceilings = [40, 80, 160, 200, 200];
    // The waits the client chose (onRetry), not the time between attempts, which a loaded machine stretches.
    expect(retries.map(({ attempt, status }) => [attempt, status])).toEqual(ceilings.map((_, i) => [i + 1, 503]));
    retries.forEach(({ waitMs }, i) => {
      expect(waitMs).toBeGreaterThanOrEqual(0);
      expect(waitMs).toBeLessThanOrEqual(ceilings[i] as number);
    });
    // Each wait was waited: the next attempt came no sooner (a timer may fire up to 1 ms early).
    gaps(proxy).forEach((gap, i) => expect(gap).toBeGreaterThanOrEqual((retries[i] as RetryEvent).waitMs - 1));
  });
});

describe('timeouts and aborts', () => {
  test('when an attempt gets no answer within attemptTimeoutMs, then it is abandoned and the next attempt gets the page', async () => {
    // Long enough for the second attempt to be answered in time on a loaded machine.
    const { proxy, store, retries } = await clientWith(['stall'], 'forward', { retry: { attemptTimeoutMs: 1_500 } });
    const started = Date.now();
    const page = await store.listPets();
    expect(page.meta.attempts).toBe(2);
    expect(retries.map(({ attempt, status }) => [attempt, status])).toEqual([[1, undefined]]);
    // Timed by the caller: the attempt's clock starts before its request reaches the proxy.
    expect(Date.now() - started).toBeGreaterThanOrEqual(1_500);
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
