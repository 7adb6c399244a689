import type { components } from '../../generated/openapi';

/** An event as the `petCreated` webhook sends it. */
export type PetCreatedEvent = components['schemas']['PetCreatedEvent'];

/** A delivery that is not, provably, this service's: wrong or missing headers, a bad signature, a stale timestamp. */
export class WebhookVerificationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WebhookVerificationError';
  }
}

export interface VerifyOptions {
  /** How far the signed timestamp may be from now, either way (default 300 s, as Standard Webhooks' libraries). */
  toleranceSeconds?: number;
  /** Now, in milliseconds (for tests). */
  now?: number;
}

type HeaderBag = Headers | Record<string, string | string[] | undefined>;

function header(headers: HeaderBag, name: string): string | undefined {
  if (typeof Headers !== 'undefined' && headers instanceof Headers) return headers.get(name) ?? undefined;
  const bag = headers as Record<string, string | string[] | undefined>;
  const value = bag[name] ?? Object.entries(bag).find(([k]) => k.toLowerCase() === name)?.[1];
  return Array.isArray(value) ? value.join(', ') : value;
}

const bytesOf = (text: string): Uint8Array<ArrayBuffer> => new TextEncoder().encode(text);

function base64Bytes(text: string): Uint8Array<ArrayBuffer> {
  const binary = atob(text);
  const out = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i += 1) out[i] = binary.charCodeAt(i);
  return out;
}

/** Compares in time that depends on the lengths only, not on where the bytes first differ. */
function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i += 1) diff |= (a[i] as number) ^ (b[i] as number);
  return diff === 0;
}

/**
 * Checks that a delivery is this service's, as Standard Webhooks verifies one, and returns the
 * event: the `webhook-signature` header holds a `v1` HMAC-SHA256 of `{webhook-id}.{webhook-timestamp}.{body}`
 * under `secret` (the endpoint's `whsec_…`; during a rotation's grace either secret verifies),
 * and the timestamp is within `toleranceSeconds` of now. Pass the body exactly as received (the
 * raw text or bytes, before any JSON parsing). Throws WebhookVerificationError otherwise.
 *
 *   const event = await verifyWebhook(process.env.WEBHOOK_SECRET, req.headers, rawBody);
 */
export async function verifyWebhook(
  secret: string,
  headers: HeaderBag,
  rawBody: string | Uint8Array,
  { toleranceSeconds = 300, now = Date.now() }: VerifyOptions = {},
): Promise<PetCreatedEvent> {
  const id = header(headers, 'webhook-id');
  const timestamp = header(headers, 'webhook-timestamp');
  const signatures = header(headers, 'webhook-signature');
  if (!id || !timestamp || !signatures) throw new WebhookVerificationError('Missing webhook-id, webhook-timestamp or webhook-signature');
  if (!/^[0-9]{1,12}$/.test(timestamp)) throw new WebhookVerificationError('webhook-timestamp is not a number of seconds');
  if (Math.abs(now / 1000 - Number(timestamp)) > toleranceSeconds)
    throw new WebhookVerificationError(`webhook-timestamp is more than ${toleranceSeconds} s from now`);
  const body = typeof rawBody === 'string' ? rawBody : new TextDecoder().decode(rawBody);
  let key: Uint8Array<ArrayBuffer>;
  try {
    key = base64Bytes(secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret);
  } catch {
    throw new WebhookVerificationError('The secret is not a whsec_ value (base64)');
  }
  const hmac = await crypto.subtle.importKey('raw', key, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
  const expected = new Uint8Array(await crypto.subtle.sign('HMAC', hmac, bytesOf(`${id}.${timestamp}.${body}`)));
  const matches = signatures.split(' ').some((entry) => {
    const [version, signature] = entry.split(',');
    if (version !== 'v1' || signature === undefined) return false;
    try {
      return sameBytes(base64Bytes(signature), expected);
    } catch {
      return false;
    }
  });
  if (!matches) throw new WebhookVerificationError('No signature in webhook-signature matches this secret');
  return JSON.parse(body) as PetCreatedEvent;
}
