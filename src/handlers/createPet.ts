import type { OperationHandler } from './types';

export const createPet: OperationHandler<'createPet'> = async ({ body }, { pets }) => {
  const { name, categoryId, status } = body;
  return { status: 201, body: await pets.create({ name, categoryId, status }) };
};
