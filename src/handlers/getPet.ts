import { type OperationHandler, failure } from '../contract/handlers';

export const getPet: OperationHandler<'getPet'> = async ({ path, deadline }, { pets }) => {
  const pet = await pets.get(path.petId, deadline);
  if (!pet) return failure(404, 'not_found', `No animal has id ${path.petId}`);
  return { status: 200, body: pet };
};
