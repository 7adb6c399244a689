import type { TransactionSql } from 'postgres';
import type { components } from '../../generated/openapi';
import { type Sql, onlyRow, transaction, withDeadline } from './db';
import type { Deadline } from './deadline';
import { IdempotencyKeyInUseError, IdempotencyKeyReusedError } from './errors';

type Pet = components['schemas']['Pet'];
type NewPet = components['schemas']['NewPet'];
type PetStatus = components['schemas']['PetStatus'];

/** A create made safe to retry: the same caller, key and body get the first response again. */
export interface IdempotentRequest {
  /** Who asked (SHA-256 of the API key): one caller's keys never meet another's. */
  owner: string;
  key: string;
  /** SHA-256 of the request body as sent. */
  fingerprint: string;
}

/**
 * Each method's queries end by `deadline` (default: QUERY_DEADLINE_MS from the call), or it
 * throws DeadlineExceededError; a database that cannot serve gives DatabaseUnavailableError.
 */
export interface PetStore {
  list(filter: { limit: number; status?: PetStatus }, deadline?: Deadline): Promise<Pet[]>;
  create(pet: NewPet, deadline?: Deadline): Promise<Pet>;
  /**
   * `replayed`: the pet was created by an earlier request with this key, and is returned as it
   * was then. Throws IdempotencyKeyInUseError or IdempotencyKeyReusedError.
   */
  createOnce(pet: NewPet, request: IdempotentRequest, deadline?: Deadline): Promise<{ pet: Pet; replayed: boolean }>;
  get(id: number, deadline?: Deadline): Promise<Pet | undefined>;
}

export interface PetStoreOptions {
  /** How long an Idempotency-Key is remembered. */
  idempotencyTtlSeconds: number;
  /** Throws NotReadyError while the database is not yet migrated. */
  assertReady?: () => void;
  /** Runs list's and get's query: on a streaming replica while it keeps up (ReadRouter.read); default: on `sql`. */
  read?: <T>(query: (q: Sql) => Promise<T>) => Promise<T>;
}

// Namespaces pg_try_advisory_xact_lock keys: a request holding an Idempotency-Key holds its lock.
const IDEMPOTENCY_LOCK_SEED = 727_002;

/** A pet's columns under the API's camelCase names: the one place the table's snake_case meets them. */
export const petColumns = (q: Sql | TransactionSql) => q`id, name, category_id AS "categoryId", status`;

export function createPetStore(
  sql: Sql,
  { idempotencyTtlSeconds, assertReady = () => {}, read = (query) => query(sql) }: PetStoreOptions,
): PetStore {
  const insert = (q: Sql | TransactionSql, { name, categoryId, status }: NewPet) =>
    // Only the named fields are stored: unknown body properties and a client-sent id never reach SQL.
    q<Pet[]>`
      INSERT INTO pets (name, category_id, status)
      VALUES (${name}, ${categoryId}, ${status})
      RETURNING ${petColumns(q)}`;

  return {
    async list({ limit, status }, deadline) {
      assertReady();
      // Ascending id order keeps pages stable. Two statements rather than one with
      // `status = $1 OR $1 IS NULL`, so that each is planned onto its own index.
      return read((q) =>
        withDeadline(
          status === undefined
            ? q<Pet[]>`
                SELECT ${petColumns(q)}
                FROM pets
                ORDER BY id
                LIMIT ${limit}`
            : q<Pet[]>`
                SELECT ${petColumns(q)}
                FROM pets
                WHERE status = ${status}
                ORDER BY id
                LIMIT ${limit}`,
          deadline,
        ),
      );
    },

    async create(pet, deadline) {
      assertReady();
      const created = onlyRow(await withDeadline(insert(sql, pet), deadline), 'INSERT INTO pets');
      return created;
    },

    async createOnce(pet, { owner, key, fingerprint }, deadline) {
      assertReady();
      // One transaction: the pet and the record of its response commit together or not at
      // all, so a crash or a 503 never leaves a key that replays nothing or a pet without its key.
      return withDeadline(
        transaction(sql, async (tx) => {
          const { locked } = onlyRow(
            await tx<{ locked: boolean }[]>`
              SELECT pg_try_advisory_xact_lock(hashtextextended(${owner} || ':' || ${key}, ${IDEMPOTENCY_LOCK_SEED})) AS locked`,
            'pg_try_advisory_xact_lock',
          );
          if (!locked) throw new IdempotencyKeyInUseError();
          const [earlier] = await tx<{ fingerprint: string; response: string }[]>`
            SELECT fingerprint, response
            FROM idempotency_keys
            WHERE owner = ${owner} AND key = ${key} AND expires_at > now()`;
          if (earlier) {
            if (earlier.fingerprint !== fingerprint) throw new IdempotencyKeyReusedError();
            return { pet: JSON.parse(earlier.response) as Pet, replayed: true };
          }
          const created = onlyRow(await insert(tx, pet), 'INSERT INTO pets');
          // An expired record of the same key is replaced.
          await tx`
            INSERT INTO idempotency_keys (owner, key, fingerprint, status, response, expires_at)
            VALUES (${owner}, ${key}, ${fingerprint}, 201, ${JSON.stringify(created)}, now() + make_interval(secs => ${idempotencyTtlSeconds}))
            ON CONFLICT (owner, key) DO UPDATE
              SET fingerprint = EXCLUDED.fingerprint, status = EXCLUDED.status, response = EXCLUDED.response,
                  created_at = now(), expires_at = EXCLUDED.expires_at`;
          return { pet: created, replayed: false };
        }),
        deadline,
      );
    },

    async get(id, deadline) {
      assertReady();
      const [pet] = await read((q) =>
        withDeadline(
          q<Pet[]>`
            SELECT ${petColumns(q)}
            FROM pets
            WHERE id = ${id}`,
          deadline,
        ),
      );
      return pet;
    },
  };
}
