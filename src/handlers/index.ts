import { handlers } from '../../generated/handlers';
import type { Stores } from '../store';
import { isStub } from './stub';
import type { HandlerMap, OperationId } from '../contract/handlers';

/** One handler per operationId of the spec, registered by `npm run generate` (generated/handlers.ts). */
export { handlers };

/** The operations whose handler is still the stub `npm run generate` wrote (answering 501). */
export const stubOperations = (): OperationId[] => (Object.keys(handlers) as OperationId[]).filter((id) => isStub(handlers[id]));

/** The handlers over their stores: the map the service runs. */
export function withStores(stores: Stores): HandlerMap {
  const bound: Record<string, unknown> = {};
  // Each handler keeps the type the registry's `satisfies` checked; only the loop cannot say so.
  for (const [operationId, handler] of Object.entries(handlers) as [OperationId, (input: never, stores: Stores) => unknown][]) {
    bound[operationId] = (input: never) => handler(input, stores);
  }
  return bound as HandlerMap;
}
