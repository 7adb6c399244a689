import { auth, issueKey, testAppForFile } from '../../support/harness';
import { MAX_ENDPOINTS_PER_CLIENT } from '../../../src/store/webhooks/endpoints';

/** The app as production runs it, WEBHOOK_ALLOW_PRIVATE_TARGETS unset: only public https targets. */
const t = testAppForFile({ webhooks: { allowPrivateTargets: false } });

const endpoint = (over: Record<string, unknown> = {}) => ({ url: 'https://hooks.example.com/animals', events: ['pet.created'], ...over });

describe('the webhook endpoint operations (/v1/webhook-endpoints)', () => {
  test('when a client creates an endpoint, then 201 shows it with its secret once, and list and get show it without', async () => {
    const key = await issueKey(t, { scopes: ['webhooks:manage'] });
    const made = await t.api
      .post('/v1/webhook-endpoints')
      .set(auth(key.key))
      .send(endpoint({ description: 'Cache' }))
      .expect(201);
    expect(made.body).toEqual({
      id: expect.stringMatching(/^we_[0-9A-Za-z]{16}$/),
      url: 'https://hooks.example.com/animals',
      events: ['pet.created'],
      description: 'Cache',
      status: 'enabled',
      createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{43}=$/),
    });
    const { secret, ...shown } = made.body;
    // Compared with its status, so that another answer says what it was (CI saw a 503 here once, its body unseen).
    const listed = await t.api.get('/v1/webhook-endpoints').set(auth(key.key));
    expect({ status: listed.status, body: listed.body }).toEqual({ status: 200, body: [shown] });
    const got = await t.api.get(`/v1/webhook-endpoints/${shown.id}`).set(auth(key.key)).expect(200);
    expect(got.body).toEqual({ ...shown, recentAttempts: [] });
    expect(JSON.stringify([listed.body, got.body])).not.toContain(secret.slice(6));
  });

  test("when another client asks for, deletes or rotates an endpoint, then it is 404 and the owner's endpoint is unchanged", async () => {
    const owner = await issueKey(t, { scopes: ['webhooks:manage'] });
    const other = await issueKey(t, { scopes: ['webhooks:manage'] });
    const { body } = await t.api.post('/v1/webhook-endpoints').set(auth(owner.key)).send(endpoint()).expect(201);
    await t.api.get(`/v1/webhook-endpoints/${body.id}`).set(auth(other.key)).expect(404);
    await t.api.delete(`/v1/webhook-endpoints/${body.id}`).set(auth(other.key)).expect(404);
    await t.api.post(`/v1/webhook-endpoints/${body.id}/rotate-secret`).set(auth(other.key)).expect(404);
    expect((await t.api.get('/v1/webhook-endpoints').set(auth(other.key)).expect(200)).body).toEqual([]);
    const still = await t.api.get(`/v1/webhook-endpoints/${body.id}`).set(auth(owner.key)).expect(200);
    expect(still.body.status).toBe('enabled');
    const [row] = await t.sql<{ secret: Buffer }[]>`SELECT secret FROM webhook_endpoints WHERE id = ${body.id}`;
    expect(`whsec_${row?.secret.toString('base64')}`).toBe(body.secret);
  });

  test('when a key lacks webhooks:manage, then each operation is 403 naming the scope', async () => {
    const reader = await issueKey(t, { scopes: ['pets:read', 'pets:write'] });
    const res = await t.api.get('/v1/webhook-endpoints').set(auth(reader.key)).expect(403);
    expect(res.body.message).toContain('webhooks:manage');
    await t.api.post('/v1/webhook-endpoints').set(auth(reader.key)).send(endpoint()).expect(403);
    await t.api.delete('/v1/webhook-endpoints/we_0000000000000000').set(auth(reader.key)).expect(403);
  });

  test('when an endpoint is deleted, then it is gone: get, delete and rotate are 404 and it is not listed', async () => {
    const key = await issueKey(t, { scopes: ['webhooks:manage'] });
    const { body } = await t.api.post('/v1/webhook-endpoints').set(auth(key.key)).send(endpoint()).expect(201);
    await t.api.delete(`/v1/webhook-endpoints/${body.id}`).set(auth(key.key)).expect(204);
    await t.api.get(`/v1/webhook-endpoints/${body.id}`).set(auth(key.key)).expect(404);
    await t.api.delete(`/v1/webhook-endpoints/${body.id}`).set(auth(key.key)).expect(404);
    await t.api.post(`/v1/webhook-endpoints/${body.id}/rotate-secret`).set(auth(key.key)).expect(404);
    expect((await t.api.get('/v1/webhook-endpoints').set(auth(key.key)).expect(200)).body).toEqual([]);
  });

  test('when a secret is rotated, then the new one is shown once and the old one signs for 24 hours more', async () => {
    const key = await issueKey(t, { scopes: ['webhooks:manage'] });
    const { body } = await t.api.post('/v1/webhook-endpoints').set(auth(key.key)).send(endpoint()).expect(201);
    const before = Date.now();
    const rotated = await t.api.post(`/v1/webhook-endpoints/${body.id}/rotate-secret`).set(auth(key.key)).expect(200);
    expect(rotated.body.secret).toMatch(/^whsec_/);
    expect(rotated.body.secret).not.toBe(body.secret);
    const grace = Date.parse(rotated.body.previousSecretExpiresAt) - before;
    expect(grace).toBeGreaterThan(24 * 3_600_000 - 60_000);
    expect(grace).toBeLessThan(24 * 3_600_000 + 60_000);
    const [row] = await t.sql<{ secret: Buffer; previous: Buffer }[]>`
      SELECT secret, previous_secret AS previous FROM webhook_endpoints WHERE id = ${body.id}`;
    expect([`whsec_${row?.secret.toString('base64')}`, `whsec_${row?.previous.toString('base64')}`]).toEqual([
      rotated.body.secret,
      body.secret,
    ]);
  });

  test.each([
    ['an http URL', 'http://hooks.example.com/x', 'must be an https URL'],
    ['a loopback address', 'https://127.0.0.1/x', 'names 127.0.0.1, an address events are never sent to'],
    ['the cloud metadata address', 'https://169.254.169.254/latest', 'names 169.254.169.254, an address events are never sent to'],
    ['a private address', 'https://10.1.2.3/x', 'names 10.1.2.3, an address events are never sent to'],
    ['an IPv4-mapped loopback', 'https://[::ffff:127.0.0.1]/x', 'an address events are never sent to'],
    ['localhost', 'https://localhost/x', 'names localhost, which is not a public name'],
    ['user information', 'https://user:pw@hooks.example.com/x', 'must not carry user information (user:password@)'],
    ['a fragment', 'https://hooks.example.com/x#y', 'must not have a fragment (#…)'],
  ])('when the URL is %s, then 400 names the url and why', async (_what, url, why) => {
    const key = await issueKey(t, { scopes: ['webhooks:manage'] });
    const res = await t.api.post('/v1/webhook-endpoints').set(auth(key.key)).send(endpoint({ url })).expect(400);
    expect(res.body.errors).toEqual([{ in: 'body', pointer: '/url', rule: 'safeTarget', detail: expect.stringContaining(why) }]);
    expect(await t.sql`SELECT 1 FROM webhook_endpoints WHERE url = ${url}`).toEqual([]);
  });

  test.each([
    ['no events', { events: [] }, 'minItems'],
    ['an unknown event', { events: ['pet.deleted'] }, 'enum'],
    ['the same event twice', { events: ['pet.created', 'pet.created'] }, 'uniqueItems'],
    ['no url', { url: undefined }, 'required'],
  ])('when the body has %s, then 400 names the rule', async (_what, over, rule) => {
    const key = await issueKey(t, { scopes: ['webhooks:manage'] });
    const res = await t.api.post('/v1/webhook-endpoints').set(auth(key.key)).send(endpoint(over)).expect(400);
    expect(res.body.errors.map((e: { rule: string }) => e.rule)).toContain(rule);
  });

  test(`when a client makes ${MAX_ENDPOINTS_PER_CLIENT + 5} endpoints at once, then exactly ${MAX_ENDPOINTS_PER_CLIENT} are made and the rest are 400`, async () => {
    const key = await issueKey(t, { scopes: ['webhooks:manage'] });
    const results = await Promise.all(
      Array.from({ length: MAX_ENDPOINTS_PER_CLIENT + 5 }, () => t.api.post('/v1/webhook-endpoints').set(auth(key.key)).send(endpoint())),
    );
    expect(results.filter((r) => r.status === 201)).toHaveLength(MAX_ENDPOINTS_PER_CLIENT);
    const refused = results.filter((r) => r.status === 400);
    expect(refused).toHaveLength(5);
    expect(refused[0]?.body.errors).toEqual([
      { in: 'body', pointer: '', rule: 'maxEndpoints', detail: expect.stringContaining('at most 20') },
    ]);
    expect((await t.api.get('/v1/webhook-endpoints').set(auth(key.key)).expect(200)).body).toHaveLength(MAX_ENDPOINTS_PER_CLIENT);
  });

  test('when the endpoint id is malformed, then 400 names the path parameter', async () => {
    const key = await issueKey(t, { scopes: ['webhooks:manage'] });
    const res = await t.api.get('/v1/webhook-endpoints/nope').set(auth(key.key)).expect(400);
    expect(res.body.errors[0]).toMatchObject({ in: 'path', name: 'endpointId', rule: 'pattern' });
  });
});
