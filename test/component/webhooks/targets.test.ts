import { randomBytes } from 'node:crypto';
import { auth, buildNewPet, issueKey, testAppForFile, until } from '../../support/harness';
import { type Received, startReceiver } from '../../support/receiver';

/**
 * Delivery as production makes it (WEBHOOK_ALLOW_PRIVATE_TARGETS unset), to endpoints whose URL
 * passed the API's check when it was made and leads somewhere forbidden when it is used (a name
 * that now resolves to loopback: DNS rebinding), written here directly to the table.
 */
const t = testAppForFile({ webhooks: { allowPrivateTargets: false, retryDelaysMs: [60_000], pollMs: 50 } });

let seq = 0;
async function endpointAt(url: string): Promise<string> {
  seq += 1;
  const id = `we_target${String(seq).padStart(10, '0')}`;
  await t.sql`
    INSERT INTO webhook_endpoints (id, client_id, url, events, secret)
    VALUES (${id}, 'test-targets', ${url}, ARRAY['pet.created'], ${randomBytes(32)})`;
  return id;
}

describe('where events are never sent', () => {
  test('when an endpoint leads to loopback, metadata or plain http, then nothing is connected to and each attempt is refused_target', async () => {
    const receiver = await startReceiver();
    const received: Received[] = receiver.received;
    try {
      const ids = {
        name: await endpointAt(`https://localhost:${receiver.port}/hooks`),
        loopback: await endpointAt(`https://127.0.0.1:${receiver.port}/hooks`),
        mapped: await endpointAt(`https://[::ffff:127.0.0.1]:${receiver.port}/hooks`),
        metadata: await endpointAt('https://169.254.169.254/latest/meta-data/'),
        http: await endpointAt(`http://hooks.example.com/hooks`),
      };
      const key = await issueKey(t, { scopes: ['pets:write'] });
      await t.api.post('/v1/pets').set(auth(key.key)).send(buildNewPet()).expect(201);
      const attempts = async () =>
        t.sql<{ endpointId: string; outcome: string; error: string }[]>`
          SELECT endpoint_id AS "endpointId", outcome, error FROM webhook_attempts ORDER BY endpoint_id`;
      await until(async () => (await attempts()).length === 5, 5_000);
      const byId = new Map((await attempts()).map((a) => [a.endpointId, a]));
      for (const id of Object.values(ids)) expect(byId.get(id)?.outcome).toBe('refused_target');
      expect(byId.get(ids.name)?.error).toBe("the URL's name led to 127.0.0.1, an address events are never sent to");
      expect(byId.get(ids.http)?.error).toBe('http: URLs are not sent to (only https)');
      expect(received).toEqual([]);
    } finally {
      await receiver.close();
    }
  });
});
