import { randomBytes } from 'node:crypto';
import { auth, buildNewPet, issueKey, testAppForFile, until } from '../../support/harness';
import { startReceiver } from '../../support/receiver';

/** Receivers that always fail: retried every 200 ms, an endpoint failing for 1.5 s disabled, a delivery given up 5 s after its event. */
const t = testAppForFile({ webhooks: { retryDelaysMs: [200], disableAfterMs: 1_500, giveUpAfterMs: 5_000, pollMs: 50 } });

const metric = async (name: string) => {
  const text = await t.metrics.registry.metrics();
  return text.split('\n').filter((line) => line.startsWith(name));
};

describe('an endpoint that keeps failing', () => {
  test('when every attempt fails for the disabling time, then the endpoint is disabled, its owner sees why, and nothing more is sent', async () => {
    const receiver = await startReceiver(() => ({ status: 500 }));
    try {
      const key = await issueKey(t, { scopes: ['pets:write', 'webhooks:manage'] });
      const { body: endpoint } = await t.api
        .post('/v1/webhook-endpoints')
        .set(auth(key.key))
        .send({ url: receiver.url, events: ['pet.created'] })
        .expect(201);
      await t.api.post('/v1/pets').set(auth(key.key)).send(buildNewPet()).expect(201);
      await until(
        async () => (await t.api.get(`/v1/webhook-endpoints/${endpoint.id}`).set(auth(key.key))).body.status === 'disabled',
        5_000,
      );
      const got = await t.api.get(`/v1/webhook-endpoints/${endpoint.id}`).set(auth(key.key)).expect(200);
      expect(got.body.disabledReason).toBe('Every delivery failed for 2 s; the last: HTTP 500');
      expect(got.body.recentAttempts.length).toBeGreaterThanOrEqual(3);
      expect(got.body.recentAttempts.every((a: { outcome: string }) => a.outcome === 'http_status')).toBe(true);
      const attempts = receiver.received.length;
      // A second endpoint, enabled, subscribed from now on: its delivery of the next create says a worker
      // has taken that event since (both deliveries were due at once), and the disabled one it left.
      const marker = await startReceiver();
      try {
        await t.api
          .post('/v1/webhook-endpoints')
          .set(auth(key.key))
          .send({ url: marker.url, events: ['pet.created'] })
          .expect(201);
        await t.api.post('/v1/pets').set(auth(key.key)).send(buildNewPet()).expect(201);
        await until(() => marker.received.length === 1);
      } finally {
        await marker.close();
      }
      expect(receiver.received).toHaveLength(attempts);
      expect(await t.sql`SELECT state FROM webhook_deliveries WHERE endpoint_id = ${endpoint.id}`).toEqual([{ state: 'pending' }]);
      expect((await metric('animal_store_webhook_attempts_total{outcome="http_status"}'))[0]).toMatch(/ ([3-9]|\d\d+)$/);
      // The disabled endpoint's waiting delivery is no backlog: no worker would take it.
      expect(await metric('animal_store_webhook_backlog ')).toEqual(['animal_store_webhook_backlog 0']);
    } finally {
      await receiver.close();
    }
  });

  test('when a failed delivery would next be tried past the give-up time, then it is marked failed and not tried again', async () => {
    const receiver = await startReceiver(() => ({ status: 503 }));
    try {
      const id = `we_${randomBytes(8).toString('hex')}`;
      await t.sql`
        INSERT INTO webhook_endpoints (id, client_id, url, events, secret)
        VALUES (${id}, 'give-up', ${receiver.url}, ARRAY['pet.created'], ${randomBytes(32)})`;
      const eventId = `evt_${randomBytes(12).toString('hex')}`;
      await t.sql`
        INSERT INTO webhook_events (id, type, data, created_at)
        VALUES (${eventId}, 'pet.created', '{"id": 1, "name": "Old", "categoryId": 1, "status": "sold"}', now() - interval '4.9 seconds')`;
      await t.sql`INSERT INTO webhook_deliveries (endpoint_id, event_id) VALUES (${id}, ${eventId})`;
      await until(
        async () => (await t.sql`SELECT 1 FROM webhook_deliveries WHERE event_id = ${eventId} AND state = 'failed'`).length === 1,
      );
      // Marked failed once its one attempt was answered (the receiver counts a request as it comes):
      // no worker takes a failed delivery again.
      expect(receiver.received).toHaveLength(1);
    } finally {
      await receiver.close();
    }
  });
});
