import type { OperationHandler } from '../contract/handlers';

/**
 * One page of the catalogue: the animals, and when more follow, `Link` (RFC 8288) naming the next
 * page with this page's limit and filter and its cursor, as a path on the origin the request came to.
 */
export const listPets: OperationHandler<'listPets'> = async ({ query, requestPath, deadline }, { pets }) => {
  const { limit, status, categoryId, cursor } = query;
  // The spec's default (20) is filled in by validation (ajv useDefaults) before the handler runs.
  if (limit === undefined) throw new Error('listPets: the default of limit was not applied');
  // A cursor this filter did not issue throws InvalidCursorError: a 400, mapped with the other domain errors.
  const page = await pets.list({ limit, status, categoryId, cursor }, deadline);
  if (page.next === undefined) return { status: 200, body: page.pets };
  // Each value percent-encoded as a query's (validation let through integers, a PetStatus and the cursor's base64url).
  let next = `limit=${limit}`;
  if (status) next += `&status=${encodeURIComponent(status)}`;
  if (categoryId !== undefined) next += `&categoryId=${categoryId}`;
  next += `&cursor=${encodeURIComponent(page.next)}`;
  return { status: 200, body: page.pets, headers: { Link: `<${requestPath}?${next}>; rel="next"` } };
};
