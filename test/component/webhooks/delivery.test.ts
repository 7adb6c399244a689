import { Webhook } from 'standardwebhooks';
import { verifyWebhook } from '../../../src/client/webhooks';
import { listAllEndpoints, replayEvent } from '../../../src/store/webhooks/admin';
import { auth, buildNewPet, issueKey, testAppForFile, until } from '../../support/harness';
import { type Answer, type Received, startReceiver } from '../../support/receiver';

/** Deliveries to receivers on loopback, retried after 300 ms, attempts cut after 1 s. */
const t = testAppForFile({ webhooks: { retryDelaysMs: [300, 300, 300, 300], attemptTimeoutMs: 1_000, pollMs: 50 } });

type Receiver = Awaited<ReturnType<typeof startReceiver>>;
const receivers: Receiver[] = [];
afterEach(async () => {
  await Promise.all(receivers.splice(0).map((r) => r.close()));
  await t.sql`UPDATE webhook_endpoints SET deleted_at = now() WHERE deleted_at IS NULL`;
});

/** A client with an endpoint subscribed to pet.created at a new receiver answering as `answer` says. */
async function subscribed(answer?: (request: Received, index: number) => Answer) {
  const receiver = await startReceiver(answer);
  receivers.push(receiver);
  const key = await issueKey(t, { scopes: ['pets:write', 'webhooks:manage'] });
  const { body } = await t.api
    .post('/v1/webhook-endpoints')
    .set(auth(key.key))
    .send({ url: receiver.url, events: ['pet.created'] })
    .expect(201);
  return { receiver, key: key.key, endpoint: body as { id: string; secret: string } };
}

/**
 * Resolves once no delivery to `endpointId` is pending (the operator's listing, npm run webhooks, says
 * so): each was sent and answered, and no worker sends one again. A duplicate a test looks for has come (or never will) by then.
 */
const settled = (endpointId: string) => until(async () => (await listAllEndpoints(t.sql)).find((e) => e.id === endpointId)?.pending === 0);

const headersOf = (r: Received) => ({
  'webhook-id': String(r.headers['webhook-id']),
  'webhook-timestamp': String(r.headers['webhook-timestamp']),
  'webhook-signature': String(r.headers['webhook-signature']),
});

describe('the petCreated webhook', () => {
  test('when an animal is created, then the endpoint gets one signed POST of the event, which standardwebhooks and verifyWebhook accept', async () => {
    const { receiver, key, endpoint } = await subscribed();
    const created = await t.api.post('/v1/pets').set(auth(key)).send(buildNewPet()).expect(201);
    await until(() => receiver.received.length === 1);
    const [delivery] = receiver.received as [Received];
    const event = JSON.parse(delivery.body);
    expect(event).toEqual({
      id: expect.stringMatching(/^evt_[0-9A-Za-z]{24}$/),
      type: 'pet.created',
      createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      data: created.body,
    });
    expect(delivery.method).toBe('POST');
    expect(delivery.headers['content-type']).toBe('application/json');
    expect(delivery.headers['webhook-id']).toBe(event.id);
    expect(Math.abs(Number(delivery.headers['webhook-timestamp']) - Date.now() / 1000)).toBeLessThan(5);
    expect(new Webhook(endpoint.secret).verify(delivery.body, headersOf(delivery))).toEqual(event);
    expect(await verifyWebhook(endpoint.secret, delivery.headers, delivery.body)).toEqual(event);
    await settled(endpoint.id);
    expect(receiver.received).toHaveLength(1);
  });

  test('when a create is replayed by its Idempotency-Key, then its event is sent once', async () => {
    const { receiver, key, endpoint } = await subscribed();
    const body = buildNewPet();
    await t.api.post('/v1/pets').set(auth(key)).set('Idempotency-Key', 'replayed-once').send(body).expect(201);
    await t.api
      .post('/v1/pets')
      .set(auth(key))
      .set('Idempotency-Key', 'replayed-once')
      .send(body)
      .expect(201)
      .expect('Idempotent-Replayed', 'true');
    await until(() => receiver.received.length === 1);
    await settled(endpoint.id);
    expect(receiver.received).toHaveLength(1);
  });

  test('when the receiver answers 500, then the event is sent again with the same id and body, and GET shows both attempts', async () => {
    const { receiver, key, endpoint } = await subscribed((_r, i) => ({ status: i === 0 ? 500 : 200 }));
    await t.api.post('/v1/pets').set(auth(key)).send(buildNewPet()).expect(201);
    await until(() => receiver.received.length === 2);
    const [first, second] = receiver.received as [Received, Received];
    expect(second.headers['webhook-id']).toBe(first.headers['webhook-id']);
    expect(second.body).toBe(first.body);
    expect(second.at - first.at).toBeGreaterThanOrEqual(250);
    expect(new Webhook(endpoint.secret).verify(second.body, headersOf(second))).toBeTruthy();
    await until(async () => (await t.sql`SELECT 1 FROM webhook_attempts WHERE endpoint_id = ${endpoint.id}`).length === 2, 2_000);
    const got = await t.api.get(`/v1/webhook-endpoints/${endpoint.id}`).set(auth(key)).expect(200);
    expect(got.body.recentAttempts).toEqual([
      { eventId: first.headers['webhook-id'], at: expect.any(String), outcome: 'delivered', status: 200, durationMs: expect.any(Number) },
      {
        eventId: first.headers['webhook-id'],
        at: expect.any(String),
        outcome: 'http_status',
        status: 500,
        durationMs: expect.any(Number),
        error: 'HTTP 500',
      },
    ]);
  });

  test('when the receiver hangs, then the attempt is cut at its timeout and the event sent again', async () => {
    const { receiver, key, endpoint } = await subscribed((_r, i) => (i === 0 ? 'hang' : { status: 204 }));
    await t.api.post('/v1/pets').set(auth(key)).send(buildNewPet()).expect(201);
    await until(() => receiver.received.length === 2, 5_000);
    const [first, second] = receiver.received as [Received, Received];
    expect(second.at - first.at).toBeGreaterThanOrEqual(1_000);
    const [attempt] = await t.sql<{ outcome: string; durationMs: number }[]>`
      SELECT outcome, duration_ms AS "durationMs" FROM webhook_attempts WHERE endpoint_id = ${endpoint.id} ORDER BY id LIMIT 1`;
    expect(attempt?.outcome).toBe('timeout');
    // Cut at the timeout: libuv times a timer from the event loop's cached clock, which may trail Date.now()
    // by a millisecond or so, so the measured duration is the timeout within a few milliseconds.
    expect(attempt?.durationMs).toBeGreaterThanOrEqual(990);
    expect(attempt?.durationMs).toBeLessThan(1_500);
  });

  test('when the receiver is down, then the event is delivered once it is back', async () => {
    const { receiver, key, endpoint } = await subscribed();
    await receiver.close();
    await t.api.post('/v1/pets').set(auth(key)).send(buildNewPet()).expect(201);
    await until(async () => (await t.sql`SELECT 1 FROM webhook_attempts WHERE endpoint_id = ${endpoint.id}`).length >= 1, 3_000);
    const back = await startReceiver();
    receivers.push(back);
    await t.sql`UPDATE webhook_endpoints SET url = ${back.url} WHERE id = ${endpoint.id}`;
    await until(() => back.received.length === 1, 5_000);
    const [failed] = await t.sql<
      { outcome: string }[]
    >`SELECT outcome FROM webhook_attempts WHERE endpoint_id = ${endpoint.id} ORDER BY id LIMIT 1`;
    expect(failed?.outcome).toBe('connection_failed');
  });

  test('when the receiver redirects, then the redirect is not followed and the attempt counts as failed', async () => {
    const { receiver, key, endpoint } = await subscribed(() => ({
      status: 302,
      headers: { Location: 'http://169.254.169.254/latest/meta-data/' },
    }));
    await t.api.post('/v1/pets').set(auth(key)).send(buildNewPet()).expect(201);
    await until(() => receiver.received.length >= 1);
    await until(async () => (await t.sql`SELECT 1 FROM webhook_attempts WHERE endpoint_id = ${endpoint.id}`).length >= 1);
    const [attempt] = await t.sql<
      { outcome: string; status: number }[]
    >`SELECT outcome, status FROM webhook_attempts WHERE endpoint_id = ${endpoint.id} LIMIT 1`;
    expect(attempt).toEqual({ outcome: 'http_status', status: 302 });
  });

  test('when the secret was rotated, then deliveries carry a signature under each secret, and either verifies', async () => {
    const { receiver, key, endpoint } = await subscribed();
    const rotated = await t.api.post(`/v1/webhook-endpoints/${endpoint.id}/rotate-secret`).set(auth(key)).expect(200);
    await t.api.post('/v1/pets').set(auth(key)).send(buildNewPet()).expect(201);
    await until(() => receiver.received.length === 1);
    const [delivery] = receiver.received as [Received];
    expect(String(delivery.headers['webhook-signature']).split(' ')).toHaveLength(2);
    for (const secret of [endpoint.secret, rotated.body.secret]) {
      expect(new Webhook(secret).verify(delivery.body, headersOf(delivery))).toBeTruthy();
      await expect(verifyWebhook(secret, delivery.headers, delivery.body)).resolves.toBeTruthy();
    }
    await expect(verifyWebhook(`whsec_${Buffer.alloc(32, 1).toString('base64')}`, delivery.headers, delivery.body)).rejects.toThrow(
      'No signature in webhook-signature matches this secret',
    );
  });

  test('when an operator replays a delivered event, then it is sent again with its id and body, a fresh timestamp and signature', async () => {
    const { receiver, key, endpoint } = await subscribed();
    await t.api.post('/v1/pets').set(auth(key)).send(buildNewPet()).expect(201);
    await until(() => receiver.received.length === 1);
    const [first] = receiver.received as [Received];
    const eventId = String(first.headers['webhook-id']);
    const later = await subscribed();
    // The timestamp is in seconds: the replay is made once the clock is in a later one.
    await until(() => Math.floor(Date.now() / 1000) > Number(first.headers['webhook-timestamp']), 2_000);
    expect(await replayEvent(t.sql, eventId)).toEqual([endpoint.id]);
    await until(() => receiver.received.length === 2);
    const [, again] = receiver.received as [Received, Received];
    expect(again.headers['webhook-id']).toBe(eventId);
    expect(again.body).toBe(first.body);
    expect(Number(again.headers['webhook-timestamp'])).toBeGreaterThan(Number(first.headers['webhook-timestamp']));
    expect(again.headers['webhook-signature']).not.toBe(first.headers['webhook-signature']);
    expect(new Webhook(endpoint.secret).verify(again.body, headersOf(again))).toEqual(JSON.parse(first.body));
    // To one endpoint, which it was not for (subscribed after the event): sent there, signed with its own secret.
    expect(await replayEvent(t.sql, eventId, later.endpoint.id)).toEqual([later.endpoint.id]);
    await until(() => later.receiver.received.length === 1);
    const [there] = later.receiver.received as [Received];
    expect(new Webhook(later.endpoint.secret).verify(there.body, headersOf(there))).toEqual(JSON.parse(first.body));
    expect(receiver.received).toHaveLength(2);
  });

  test('when an endpoint is deleted, then later creates send it nothing and, with no endpoint left, write no event', async () => {
    const { receiver, key, endpoint } = await subscribed();
    await t.api.delete(`/v1/webhook-endpoints/${endpoint.id}`).set(auth(key)).expect(204);
    const created = await t.api.post('/v1/pets').set(auth(key)).send(buildNewPet()).expect(201);
    // The event would have been written by the create's own transaction: none was, so none can be sent.
    expect(await t.sql`SELECT 1 FROM webhook_events WHERE (data->>'id')::bigint = ${created.body.id}`).toEqual([]);
    expect(await t.sql`SELECT 1 FROM webhook_deliveries WHERE endpoint_id = ${endpoint.id}`).toEqual([]);
    expect(receiver.received).toEqual([]);
  });
});
