import { type OperationHandler, failure } from '../contract/handlers';
import { ownerOf } from './listWebhookEndpoints';

export const notFound = (id: string) => failure(404, 'not_found', `No webhook endpoint of this client has id ${id}`);

export const getWebhookEndpoint: OperationHandler<'getWebhookEndpoint'> = async ({ path, caller, deadline }, { webhookEndpoints }) => {
  const endpoint = await webhookEndpoints.get(ownerOf(caller), path.endpointId, deadline);
  return endpoint ? { status: 200, body: endpoint } : notFound(path.endpointId);
};
