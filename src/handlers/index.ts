import { createPet } from './createPet';
import { getHealth } from './getHealth';
import { getPet } from './getPet';
import { getReadiness } from './getReadiness';
import { listPets } from './listPets';
import type { OperationHandler, OperationId } from './types';

/** One handler per operationId of the spec: a missing or extra one fails the type check. */
export const handlers = { listPets, createPet, getPet, getHealth, getReadiness } satisfies { [Op in OperationId]: OperationHandler<Op> };
