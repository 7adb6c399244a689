/**
 * The contract's checks written by hand, for the benchmark's baselines: what ajv and
 * openapi-backend do for the product from spec/openapi.yaml, here as plain code. The
 * baselines must refuse what the product refuses (test/system/tools/bench.test.ts compares them).
 */
import type { components } from '../../generated/openapi';
import { HttpError } from './shared';

type NewPet = components['schemas']['NewPet'];
type PetStatus = components['schemas']['PetStatus'];

const STATUSES: readonly string[] = ['available', 'pending', 'sold'];
const DECIMAL = /^[0-9]+$/;
// Control characters are what this pattern is for.
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001F\u007F-\u009F]/;
const bad = (message: string) => new HttpError(400, 'validation_failed', message);

const LIST_PARAMETERS = ['limit', 'status', 'cursor'];
const CURSOR = /^[A-Za-z0-9_-]{1,64}$/;

/** listPets' query: `limit` 1–100 (default 20), `status` and `cursor`; nothing else, each at most once. */
export function checkListQuery(query: URLSearchParams): { limit: number; status?: PetStatus; cursor?: string } {
  const problems: string[] = [];
  for (const name of new Set(query.keys())) {
    if (!LIST_PARAMETERS.includes(name)) problems.push(`unknown query parameter '${name}'`);
    else if (query.getAll(name).length > 1) problems.push(`query parameter '${name}' must be given once`);
  }
  let limit = 20;
  const rawLimit = query.get('limit');
  if (rawLimit !== null) {
    limit = Number(rawLimit);
    if (!DECIMAL.test(rawLimit)) problems.push("query parameter 'limit' must be a decimal integer");
    else if (limit < 1 || limit > 100) problems.push("query parameter 'limit' must be from 1 to 100");
  }
  const status = query.get('status');
  if (status !== null && !STATUSES.includes(status)) problems.push("query parameter 'status' must be one of available, pending, sold");
  const cursor = query.get('cursor') ?? undefined;
  if (cursor !== undefined && !CURSOR.test(cursor)) problems.push("query parameter 'cursor' must be 1 to 64 of A-Z a-z 0-9 _ -");
  if (problems.length) throw bad(problems.join('; '));
  return { limit, status: (status ?? undefined) as PetStatus | undefined, cursor };
}

/** getPet's path parameter: a positive decimal integer within int64's safe range. */
export function checkPetId(raw: string): number {
  const id = Number(raw);
  if (!DECIMAL.test(raw)) throw bad("path parameter 'petId' must be a decimal integer");
  if (id < 1 || !Number.isSafeInteger(id)) throw bad("path parameter 'petId' must be from 1 to 9007199254740991");
  return id;
}

/** createPet's body (already parsed exactly): NewPet, unknown properties ignored, status defaulted. */
export function checkNewPet(body: unknown): NewPet {
  if (body === undefined) throw bad('the request body is required');
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw bad('the body must be an object');
  const { name, categoryId, status } = body as Record<string, unknown>;
  const problems: string[] = [];
  if (name === undefined) problems.push("body property 'name' is required");
  else if (typeof name !== 'string') problems.push("body property 'name' must be a string");
  else if ([...name].length < 1 || [...name].length > 200) problems.push("body property 'name' must be 1 to 200 characters");
  else if (CONTROL.test(name)) problems.push("body property 'name' must not contain control characters");
  if (categoryId === undefined) problems.push("body property 'categoryId' is required");
  else if (typeof categoryId !== 'number' || !Number.isSafeInteger(categoryId))
    problems.push("body property 'categoryId' must be an integer between -9007199254740991 and 9007199254740991");
  if (status !== undefined && !STATUSES.includes(status as string))
    problems.push("body property 'status' must be one of available, pending, sold");
  if (problems.length) throw bad(problems.join('; '));
  return { name: name as string, categoryId: categoryId as number, status: (status ?? 'available') as PetStatus };
}
