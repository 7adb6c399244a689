/**
 * The scopes of the spec's operations, written by `npm run generate` from each operation's security
 * requirements (the role names they give the bearer scheme): do not edit. A key holds some of `scopes`;
 * it may call an operation when it holds every scope of one of the lists `operationScopes` gives it.
 */
import type { OperationId } from '../src/contract/handlers';

export const scopes = ['pets:read', 'pets:write', 'webhooks:manage'] as const;
export type Scope = (typeof scopes)[number];

export const operationScopes = {
  getHealth: [],
  getReadiness: [],
  listPets: [['pets:read']],
  createPet: [['pets:write']],
  getPet: [['pets:read']],
  listWebhookEndpoints: [['webhooks:manage']],
  createWebhookEndpoint: [['webhooks:manage']],
  getWebhookEndpoint: [['webhooks:manage']],
  deleteWebhookEndpoint: [['webhooks:manage']],
  rotateWebhookEndpointSecret: [['webhooks:manage']],
} as const satisfies { [Op in OperationId]: readonly (readonly Scope[])[] };
