/**
 * The handler registry, written by `npm run generate` from the operations of spec/: do not edit.
 * One handler per operationId, from src/handlers/<operationId>.ts. The type check fails when one
 * is missing, or its input or replies disagree with the spec's types (generated/openapi.ts).
 */
import type { OperationHandler, OperationId } from '../src/contract/handlers';
import { getHealth } from '../src/handlers/getHealth';
import { getReadiness } from '../src/handlers/getReadiness';
import { listPets } from '../src/handlers/listPets';
import { createPet } from '../src/handlers/createPet';
import { getPet } from '../src/handlers/getPet';
import { listWebhookEndpoints } from '../src/handlers/listWebhookEndpoints';
import { createWebhookEndpoint } from '../src/handlers/createWebhookEndpoint';
import { getWebhookEndpoint } from '../src/handlers/getWebhookEndpoint';
import { deleteWebhookEndpoint } from '../src/handlers/deleteWebhookEndpoint';
import { rotateWebhookEndpointSecret } from '../src/handlers/rotateWebhookEndpointSecret';

export const handlers = {
  getHealth,
  getReadiness,
  listPets,
  createPet,
  getPet,
  listWebhookEndpoints,
  createWebhookEndpoint,
  getWebhookEndpoint,
  deleteWebhookEndpoint,
  rotateWebhookEndpointSecret,
} satisfies { [Op in OperationId]: OperationHandler<Op> };
