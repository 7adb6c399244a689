import type { OperationHandler } from '../contract/handlers';

export const listWebhookEndpoints: OperationHandler<'listWebhookEndpoints'> = async ({ caller, deadline }, { webhookEndpoints }) => ({
  status: 200,
  body: await webhookEndpoints.list(ownerOf(caller), deadline),
});

/** The client whose endpoints a request sees: the caller's. The security requirement guarantees one. */
export function ownerOf(caller: { clientId: string } | undefined): string {
  if (caller === undefined) throw new Error('a webhook endpoint operation ran without a caller');
  return caller.clientId;
}
