import type { OperationHandler } from '../contract/handlers';
import { notFound } from './getWebhookEndpoint';
import { ownerOf } from './listWebhookEndpoints';

export const deleteWebhookEndpoint: OperationHandler<'deleteWebhookEndpoint'> = async ({ path, caller, deadline }, { webhookEndpoints }) =>
  (await webhookEndpoints.remove(ownerOf(caller), path.endpointId, deadline))
    ? { status: 204, body: undefined as never }
    : notFound(path.endpointId);
