import { createHmac } from 'node:crypto';

/** The three headers of one attempt (Standard Webhooks), lower-case as they are sent. */
export interface SignedHeaders {
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
}

/**
 * The headers that sign `body` for the message `id` at `timestamp` (Unix seconds): one
 * `v1,<base64 HMAC-SHA256 of "id.timestamp.body">` per secret in force, space-separated, so that
 * a receiver holding either secret of a rotation's grace verifies it.
 */
export function signedHeaders(id: string, timestamp: number, body: string, secrets: readonly Buffer[]): SignedHeaders {
  if (secrets.length === 0) throw new Error('signedHeaders: no secret to sign with');
  const content = `${id}.${timestamp}.${body}`;
  const signatures = secrets.map((secret) => `v1,${createHmac('sha256', secret).update(content).digest('base64')}`);
  return { 'webhook-id': id, 'webhook-timestamp': String(timestamp), 'webhook-signature': signatures.join(' ') };
}
