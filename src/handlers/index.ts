import { handlers } from '../../generated/handlers';
import type { Stores } from '../store';
import { isStub } from './stub';
import { type HandlerMap, type OperationId, handlerFile } from '../contract/handlers';

/** One handler per operationId of the spec, registered by `npm run generate` (generated/handlers.ts). */
export { handlers };

/** The operations whose handler is still the stub `npm run generate` wrote (answering 501). */
export const stubOperations = (): OperationId[] => (Object.keys(handlers) as OperationId[]).filter((id) => isStub(handlers[id]));

/**
 * What start-up says of the operations whose handler is still a stub: nothing when there are none;
 * else a warning listing them (they answer 501), or with ALLOW_STUBS=false a refusal to start, naming them.
 */
export function stubsAtStartUp(allowStubs: boolean): { refuse: boolean; message: string } | undefined {
  const stubs = stubOperations();
  if (stubs.length === 0) return undefined;
  const list = stubs.map((id) => `${id} (${handlerFile(id)})`).join(', ');
  if (!allowStubs)
    return {
      refuse: true,
      message: `ALLOW_STUBS=false and ${stubs.length} operation(s) are still generated stubs: ${list}; implement them, or set ALLOW_STUBS=true to serve them as 501 not_implemented`,
    };
  return { refuse: false, message: `${stubs.length} operation(s) are still generated stubs answering 501 not_implemented: ${list}` };
}

/** The handlers over their stores: the map the service runs. */
export function withStores(stores: Stores): HandlerMap {
  const bound: Record<string, unknown> = {};
  // Each handler keeps the type the registry's `satisfies` checked; only the loop cannot say so.
  for (const [operationId, handler] of Object.entries(handlers) as [OperationId, (input: never, stores: Stores) => unknown][]) {
    bound[operationId] = (input: never) => handler(input, stores);
  }
  return bound as HandlerMap;
}
