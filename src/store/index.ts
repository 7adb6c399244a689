import type { Sql } from '../db';
import type { Deps } from '../handlers/types';
import { createHealthCheck } from './health';
import { createPetStore } from './pets';

/** Everything the handlers read and write, over one pool. */
export function createStores(sql: Sql): Deps {
  return { pets: createPetStore(sql), health: createHealthCheck(sql) };
}
