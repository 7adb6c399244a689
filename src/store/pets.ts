import type { components } from '../../generated/openapi';
import { type Sql, withDeadline } from '../db';

type Pet = components['schemas']['Pet'];
type NewPet = components['schemas']['NewPet'];
type PetStatus = components['schemas']['PetStatus'];

export interface PetStore {
  list(filter: { limit: number; status?: PetStatus }): Promise<Pet[]>;
  create(pet: NewPet): Promise<Pet>;
  get(id: number): Promise<Pet | undefined>;
}

// The API's camelCase names are given to the table's snake_case columns here and nowhere else.
export function createPetStore(sql: Sql): PetStore {
  return {
    async list({ limit, status }) {
      // Ascending id order keeps pages stable. Two statements rather than one with
      // `status = $1 OR $1 IS NULL`, so that each is planned onto its own index.
      return withDeadline(
        status === undefined
          ? sql<Pet[]>`
              SELECT id, name, category_id AS "categoryId", status
              FROM pets
              ORDER BY id
              LIMIT ${limit}`
          : sql<Pet[]>`
              SELECT id, name, category_id AS "categoryId", status
              FROM pets
              WHERE status = ${status}
              ORDER BY id
              LIMIT ${limit}`,
      );
    },

    async create({ name, categoryId, status }) {
      // Only the named fields are stored: unknown body properties and a client-sent id never reach SQL.
      const [pet] = await withDeadline(sql<Pet[]>`
        INSERT INTO pets (name, category_id, status)
        VALUES (${name}, ${categoryId}, ${status})
        RETURNING id, name, category_id AS "categoryId", status`);
      return pet;
    },

    async get(id) {
      const [pet] = await withDeadline(sql<Pet[]>`
        SELECT id, name, category_id AS "categoryId", status
        FROM pets
        WHERE id = ${id}`);
      return pet;
    },
  };
}
