import type { OperationHandler } from '../contract/handlers';
import { ownerOf } from './listWebhookEndpoints';

/** The store refuses a URL events are never sent to, and a client's endpoint past the bound: both 400s (`toHttpError`). */
export const createWebhookEndpoint: OperationHandler<'createWebhookEndpoint'> = async (
  { body, caller, deadline },
  { webhookEndpoints },
) => {
  const { url, events, description } = body;
  return { status: 201, body: await webhookEndpoints.create(ownerOf(caller), { url, events, description }, deadline) };
};
