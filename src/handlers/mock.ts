import type { OpenAPIV3 } from 'openapi-types';
import { createBackend } from '../contract/backend';
import { type Spec, resolve } from '../contract/spec';
import type { HandlerMap, OperationId } from '../contract/handlers';

/**
 * The example of a success response's next-page link (a `Link` header whose example is
 * `rel="next"`), when the operation documents one.
 */
function nextPageLinkExample(spec: Spec, operationId: string): string | undefined {
  const facts = spec.operations.get(operationId);
  if (!facts) return undefined;
  const op = spec.document.paths[facts.path]?.[facts.method.toLowerCase() as OpenAPIV3.HttpMethods];
  for (const [status, response] of Object.entries(op?.responses ?? {})) {
    if (!status.startsWith('2')) continue;
    const link = resolve(spec.document, response).headers?.Link;
    const example: unknown = link && resolve(spec.document, link).example;
    if (typeof example === 'string' && /; rel="next"$/.test(example)) return example;
  }
  return undefined;
}

/**
 * The handler map of `npm run mock`: every operation of the spec answers with the spec's
 * example for its response (openapi-backend's mockResponseForOperation), without a database.
 * `Prefer: code=404` asks for another documented response, as mock servers commonly allow.
 * A list with a next-page link is two pages: the first (no `cursor`) carries the link's
 * example, and the page it leads to (any valid `cursor`) carries none, so a client's walk ends.
 */
export async function createMockHandlers(spec: Spec): Promise<HandlerMap> {
  const api = await createBackend(spec);
  const mocks: Record<string, unknown> = {};
  for (const operationId of spec.operations.keys() as Iterable<OperationId>) {
    const nextPage = nextPageLinkExample(spec, operationId);
    mocks[operationId] = ({ headers, query }: { headers: { prefer?: string | string[] }; query: { cursor?: string } }) => {
      const code = /\bcode=(\d{3})\b/.exec(String(headers.prefer ?? ''))?.[1];
      const response = api.mockResponseForOperation(operationId, { code: code === undefined ? undefined : Number(code) });
      // The library types the example `any`: it is whatever JSON the spec holds.
      const body: unknown = response.mock;
      const link = nextPage !== undefined && response.status < 300 && query.cursor === undefined ? { Link: nextPage } : undefined;
      return Promise.resolve({ status: response.status, body, headers: link });
    };
  }
  return mocks as HandlerMap;
}
