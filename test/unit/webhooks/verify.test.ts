import { Webhook } from 'standardwebhooks';
import { WebhookVerificationError, verifyWebhook } from '../../../src/client/webhooks';
import { signedHeaders } from '../../../src/webhooks/signing';
import { compileEventSerialiser } from '../../../src/contract/serialisers';
import { loadSpec } from '../../../src/contract/spec';
import { eventOf } from '../../../src/webhooks/events';

// The delivery docs/webhooks.md shows, as the contract's serialiser writes it, and its endpoint's secret.
const SECRET = 'whsec_RqoS7qLwG4hUxTPalQLNaeLEo+NzNkwedkqtVPapBGs=';
const BODY =
  '{"id":"evt_GwQbVShkOLnlmYbAYPo3PaJ6","type":"pet.created","createdAt":"2026-11-27T17:29:34.653Z","data":{"name":"Rex","categoryId":1,"status":"available","id":1}}';
const HEADERS = {
  'webhook-id': 'evt_GwQbVShkOLnlmYbAYPo3PaJ6',
  'webhook-timestamp': '1795800574',
  'webhook-signature': 'v1,nCzXgPsAVIO8Zi56z/sCTn5amc0yc0u5XK0L7YshThg=',
};
const AT = 1795800574 * 1000;

test('when the documented event is written by the serialiser compiled from PetCreatedEvent, then its body is the documented one, to the byte', async () => {
  const writeEvent = compileEventSerialiser(await loadSpec());
  const stored = { eventId: 'evt_GwQbVShkOLnlmYbAYPo3PaJ6', type: 'pet.created', createdAt: '2026-11-27T17:29:34.653Z' };
  // The animal as the create's statement stores it, keys in another order and a field the contract does not name.
  const data = { id: 1, status: 'available', categoryId: 1, name: 'Rex', internal: true };
  expect(writeEvent(eventOf({ ...stored, data }))).toBe(BODY);
  expect(() => writeEvent(eventOf({ ...stored, data: { id: 1 } }))).toThrow(/required/);
});

describe('verifyWebhook', () => {
  test('when the documented delivery is verified at its time, then it passes and gives the event', async () => {
    await expect(verifyWebhook(SECRET, HEADERS, BODY, { now: AT + 1_000 })).resolves.toEqual(JSON.parse(BODY));
    await expect(verifyWebhook(SECRET, new Headers(HEADERS), new TextEncoder().encode(BODY), { now: AT })).resolves.toBeTruthy();
  });

  test.each([
    ['a body changed by one byte', HEADERS, BODY.replace('Rex', 'Rey'), AT, 'No signature in webhook-signature matches this secret'],
    ['a timestamp 301 s old', HEADERS, BODY, AT + 301_000, 'webhook-timestamp is more than 300 s from now'],
    ['no signature header', { ...HEADERS, 'webhook-signature': '' }, BODY, AT, 'Missing webhook-id'],
    [
      'a v2 signature only',
      { ...HEADERS, 'webhook-signature': HEADERS['webhook-signature'].replace('v1,', 'v2,') },
      BODY,
      AT,
      'No signature',
    ],
  ])('when it has %s, then it is refused', async (_what, headers, body, now, message) => {
    await expect(verifyWebhook(SECRET, headers, body, { now })).rejects.toThrow(WebhookVerificationError);
    await expect(verifyWebhook(SECRET, headers, body, { now })).rejects.toThrow(message);
  });

  test('when the service signs with two secrets, then verifyWebhook and standardwebhooks each accept either, and refuse a third', async () => {
    const [one, two, three] = [1, 2, 3].map((n) => Buffer.alloc(32, n));
    const timestamp = Math.floor(Date.now() / 1000);
    const headers = signedHeaders('evt_abcdefghijklmnopqrstuvwx', timestamp, BODY, [one as Buffer, two as Buffer]);
    for (const secret of [one, two]) {
      const text = `whsec_${(secret as Buffer).toString('base64')}`;
      await expect(verifyWebhook(text, { ...headers }, BODY)).resolves.toBeTruthy();
      expect(new Webhook(text).verify(BODY, { ...headers })).toBeTruthy();
    }
    await expect(verifyWebhook(`whsec_${(three as Buffer).toString('base64')}`, { ...headers }, BODY)).rejects.toThrow('No signature');
  });
});
