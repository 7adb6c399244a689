import type { OperationHandler } from '../contract/handlers';
import { errorBody } from '../contract/errorBody';
import { TooManyEndpointsError } from '../store/webhooks';
import { refusedUrl } from '../webhooks/target';
import { ownerOf } from './listWebhookEndpoints';

export const createWebhookEndpoint: OperationHandler<'createWebhookEndpoint'> = async (
  { body, caller, deadline },
  { webhookEndpoints },
) => {
  const refused = refusedUrl(body.url, webhookEndpoints.allowPrivateTargets);
  if (refused !== undefined) {
    const detail = `body property 'url' ${refused}`;
    return {
      status: 400,
      body: errorBody(400, 'validation_failed', detail, [{ in: 'body', pointer: '/url', rule: 'safeTarget', detail }]),
    };
  }
  try {
    const { url, events, description } = body;
    return { status: 201, body: await webhookEndpoints.create(ownerOf(caller), { url, events, description }, deadline) };
  } catch (err) {
    if (!(err instanceof TooManyEndpointsError)) throw err;
    return {
      status: 400,
      body: errorBody(400, 'validation_failed', err.message, [{ in: 'body', pointer: '', rule: 'maxEndpoints', detail: err.message }]),
    };
  }
};
