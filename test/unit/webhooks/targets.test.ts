import { isPublicAddress, refusedUrl } from '../../../src/store/webhooks/targets';
import { GIVE_UP_AFTER_MS, RETRY_DELAYS_MS, nextStep } from '../../../src/webhooks/worker';

describe('isPublicAddress', () => {
  test.each([
    '127.0.0.1',
    '127.255.0.9',
    '10.0.0.1',
    '172.16.0.1',
    '172.31.255.255',
    '192.168.1.1',
    '169.254.169.254',
    '100.64.0.1',
    '0.0.0.0',
    '224.0.0.1',
    '255.255.255.255',
    '::1',
    '::',
    'fe80::1',
    'fc00::1',
    'fd00:ec2::254',
    '::ffff:127.0.0.1',
    '::ffff:7f00:1',
    '::ffff:a9fe:a9fe',
    '64:ff9b::10.0.0.1',
    '2001:db8::1',
    'not an address',
  ])('when the address is %s, then events are never sent to it', (address) => {
    expect(isPublicAddress(address)).toBe(false);
  });

  test.each(['93.184.215.14', '8.8.8.8', '172.32.0.1', '2606:4700::1111', '::ffff:8.8.8.8', '64:ff9b::808:808'])(
    'when the address is %s, then it is public',
    (address) => {
      expect(isPublicAddress(address)).toBe(true);
    },
  );
});

describe('refusedUrl', () => {
  test('when private targets are allowed, then http and loopback pass, and user information still does not', () => {
    expect(refusedUrl('http://127.0.0.1:8080/x', true)).toBeUndefined();
    expect(refusedUrl('ftp://127.0.0.1/x', true)).toBe('must be an http or https URL');
    expect(refusedUrl('http://u:p@127.0.0.1/x', true)).toBe('must not carry user information (user:password@)');
  });

  test('when the URL is public https, then it passes', () => {
    expect(refusedUrl('https://hooks.example.com:8443/a?b=c', false)).toBeUndefined();
  });

  test.each(['not a url', '/relative', 'https://intranet/x', 'https://a.localhost/x'])('when the URL is %s, then it is refused', (url) => {
    expect(refusedUrl(url, false)).toEqual(expect.any(String));
  });
});

describe('nextStep (the published backoff)', () => {
  const failed = { outcome: 'http_status' as const, status: 500, durationMs: 10 };
  test('when attempts fail, then the delays are 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, then 10 h each', () => {
    const delays = [1, 2, 3, 4, 5, 6, 7, 8].map((n) => nextStep(n, 0, failed));
    expect(delays).toEqual(
      [5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000, 36_000_000].map((delayMs) => ({
        state: 'pending',
        delayMs,
      })),
    );
    expect(RETRY_DELAYS_MS).toHaveLength(6);
  });

  test('when the next try would come more than 3 days after the event, then the delivery fails for good', () => {
    expect(nextStep(9, GIVE_UP_AFTER_MS - 36_000_000, failed)).toEqual({ state: 'failed' });
    expect(nextStep(9, GIVE_UP_AFTER_MS - 36_000_100, failed)).toEqual({ state: 'pending', delayMs: 36_000_000 });
  });

  test('when an attempt is delivered, then nothing follows', () => {
    expect(nextStep(3, GIVE_UP_AFTER_MS * 2, { outcome: 'delivered', status: 200, durationMs: 5 })).toEqual({ state: 'delivered' });
  });
});
