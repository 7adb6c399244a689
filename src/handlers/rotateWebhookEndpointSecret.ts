import type { OperationHandler } from '../contract/handlers';
import { notFound } from './getWebhookEndpoint';
import { ownerOf } from './listWebhookEndpoints';

export const rotateWebhookEndpointSecret: OperationHandler<'rotateWebhookEndpointSecret'> = async (
  { path, caller, deadline },
  { webhookEndpoints },
) => {
  const rotated = await webhookEndpoints.rotateSecret(ownerOf(caller), path.endpointId, deadline);
  return rotated ? { status: 200, body: rotated } : notFound(path.endpointId);
};
