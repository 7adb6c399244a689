import { createPet } from './createPet';
import { getPet } from './getPet';
import { listPets } from './listPets';
import type { OperationHandler, OperationId } from './types';

/** One handler per operationId of the spec: a missing or extra one fails the type check. */
export const handlers = { listPets, createPet, getPet } satisfies { [Op in OperationId]: OperationHandler<Op> };
