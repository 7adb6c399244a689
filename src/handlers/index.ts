import type { Stores } from '../store';
import { createPet } from './createPet';
import { getHealth } from './getHealth';
import { getPet } from './getPet';
import { getReadiness } from './getReadiness';
import { listPets } from './listPets';
import type { HandlerMap, OperationHandler, OperationId } from './types';

/** One handler per operationId of the spec: a missing or extra one, or one whose types disagree with the spec, fails the type check. */
export const handlers = { listPets, createPet, getPet, getHealth, getReadiness } satisfies { [Op in OperationId]: OperationHandler<Op> };

/** The handlers over their stores: the map the service runs. */
export function withStores(stores: Stores): HandlerMap {
  const bound: Record<string, unknown> = {};
  // Each handler keeps the type `satisfies` checked above; only the loop cannot say so.
  for (const [operationId, handler] of Object.entries(handlers) as [OperationId, (input: never, stores: Stores) => unknown][]) {
    bound[operationId] = (input: never) => handler(input, stores);
  }
  return bound as HandlerMap;
}
