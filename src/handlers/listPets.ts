import type { OperationHandler } from './types';

export const listPets: OperationHandler<'listPets'> = async ({ query, deadline }, { pets }) => {
  // The spec's default (20) is filled in by validation (ajv useDefaults) before the handler runs.
  if (query.limit === undefined) throw new Error('listPets: the default of limit was not applied');
  return { status: 200, body: await pets.list({ limit: query.limit, status: query.status }, deadline) };
};
