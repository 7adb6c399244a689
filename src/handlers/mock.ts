import type { Spec } from '../contract/spec';
import { createBackend } from '../contract/backend';
import type { HandlerMap, OperationId } from './types';

/**
 * The handler map of `npm run mock`: every operation of the spec answers with the spec's
 * example for its response (openapi-backend's mockResponseForOperation), without a database.
 * `Prefer: code=404` asks for another documented response, as mock servers commonly allow.
 */
export async function createMockHandlers(spec: Spec): Promise<HandlerMap> {
  const api = await createBackend(spec);
  const mocks: Record<string, unknown> = {};
  for (const operationId of spec.operations.keys() as Iterable<OperationId>) {
    mocks[operationId] = ({ headers }: { headers: { prefer?: string | string[] } }) => {
      const code = /\bcode=(\d{3})\b/.exec(String(headers.prefer ?? ''))?.[1];
      const response = api.mockResponseForOperation(operationId, { code: code === undefined ? undefined : Number(code) });
      // The library types the example `any`: it is whatever JSON the spec holds.
      const body: unknown = response.mock;
      return Promise.resolve({ status: response.status, body });
    };
  }
  return mocks as HandlerMap;
}
