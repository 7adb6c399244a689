import { rotateKey } from '../../../src/store/keys/admin';
import { auth, buildNewPet, issueKey, testAppForFile, until } from '../../support/harness';

// Managed keys over seconds of the wall clock: one that expires, and a rotation's grace period
// ending. The rest of the keys' rules are test/component/http/apiKeys.test.ts.
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('managed API keys: expiry', () => {
  const t = testAppForFile();

  test('when a key will expire, then every answer says when (API-Key-Expiration, an HTTP date), and once it has, 401 says it expired', async () => {
    const { key, listing } = await issueKey(t, { expiresInSeconds: 2 });
    const ok = await t.api.get('/v1/pets').set(auth(key)).expect(200);
    expect(ok.headers['api-key-expiration']).toBe(listing.expiresAt?.toUTCString());
    const refused = await t.api.post('/v1/pets').set(auth(key)).send({}).expect(400);
    expect(refused.headers['api-key-expiration']).toBe(listing.expiresAt?.toUTCString());
    await sleep((listing.expiresAt?.getTime() ?? 0) - Date.now() + 50);
    const expired = await t.api.get('/v1/pets').set(auth(key)).expect(401);
    expect(expired.body).toEqual({ code: 'unauthorized', message: 'Invalid API key: it has expired', status: 401 });
    expect(expired.headers['www-authenticate']).toBe(
      'Bearer realm="animal-store", error="invalid_token", error_description="The API key expired"',
    );
    expect(expired.headers['api-key-expiration']).toBeUndefined();
  });
});

describe('managed API keys: rotation keeps what the client did', () => {
  const t = testAppForFile({ rateLimit: { requests: 6, windowSeconds: 3600 } });

  test('when a key is rotated with a grace period, then both keys work until it ends, then only the successor; an idempotent create replays across the rotation and the rate-limit count carries over', async () => {
    const { key: old, listing } = await issueKey(t, { client: 'rotating' });
    const body = buildNewPet({ name: 'Made once' });
    const first = await t.api.post('/v1/pets').set(auth(old)).set('Idempotency-Key', 'rotate-1').send(body).expect(201);
    await t.api.get('/v1/pets').set(auth(old)).expect(200);
    const rotated = await rotateKey(t.sql, { id: listing.id, graceSeconds: 2, actor: 'test' });
    await until(() => t.keys.lookup(rotated.listing.id).state === 'found');
    expect(rotated.listing).toMatchObject({ client: 'rotating', scopes: ['pets:read', 'pets:write'], replaces: listing.id });

    // Both work during the grace; the old key now says when it ends.
    const during = await t.api.get('/v1/pets').set(auth(old)).expect(200);
    expect(during.headers['api-key-expiration']).toBe(rotated.old.expiresAt?.toUTCString());
    const replay = await t.api.post('/v1/pets').set(auth(rotated.key)).set('Idempotency-Key', 'rotate-1').send(body).expect(201);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.body).toEqual(first.body);
    expect(await t.sql`SELECT count(*)::int AS n FROM pets WHERE name = 'Made once'`).toEqual([{ n: 1 }]);

    // Four of the client's six requests are spent, three by the old key: the successor has two left, not six.
    await t.api.get('/v1/pets').set(auth(rotated.key)).expect(200);
    await t.api.get('/v1/pets').set(auth(rotated.key)).expect(200);
    const last = await t.api.get('/v1/pets').set(auth(rotated.key)).expect(429);
    expect(last.body.code).toBe('rate_limited');

    // After the grace only the successor is honoured (as expired, the old key's answer is 401 before any quota).
    await sleep((rotated.old.expiresAt?.getTime() ?? 0) - Date.now() + 50);
    const after = await t.api.get('/v1/pets').set(auth(old)).expect(401);
    expect(after.body.message).toBe('Invalid API key: it has expired');
    await t.api.get('/v1/pets').set(auth(rotated.key)).expect(429);
  });
});
