import type { TransactionSql } from 'postgres';
import type { components } from '../../generated/openapi';
import { type WriteTransaction, commitWithin, writeColumns } from './commit';
import { type Sql, onlyRow, withDeadline } from './db';
import { type CursorCodec, createCursorCodec } from './cursors';
import type { Deadline } from './deadline';
import { IdempotencyKeyInUseError, IdempotencyKeyReusedError, InvalidCursorError } from './errors';

type Pet = components['schemas']['Pet'];
type NewPet = components['schemas']['NewPet'];
type PetStatus = components['schemas']['PetStatus'];

/** A create made safe to retry: the same caller, key and body get the first response again. */
export interface IdempotentRequest {
  /** The client that asked (any of its API keys): one client's keys never meet another's. */
  clientId: string;
  key: string;
  /** SHA-256 of the request body as sent. */
  fingerprint: string;
}

/** What a list asks for: a page of at most `limit` animals, after the position `cursor` names (absent: the first page). */
export interface PetFilter {
  limit: number;
  status?: PetStatus;
  /** A cursor from an earlier page's `next`, of a walk with the same `status`. */
  cursor?: string;
}

/** One page of a list, and the cursor of the page after it when more animals follow. */
export interface PetPage {
  pets: Pet[];
  next: string | undefined;
}

/**
 * Each method's queries end by `deadline` (default: QUERY_DEADLINE_MS from the call), or it
 * throws DeadlineExceededError; a database that cannot serve gives DatabaseUnavailableError.
 */
export interface PetStore {
  /** Keyset pagination on `id`: any page costs what the first costs. Throws InvalidCursorError for a cursor it did not issue for this filter. */
  list(filter: PetFilter, deadline?: Deadline): Promise<PetPage>;
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

/** The page cursors' signing key, shared by every instance (migration 0004 made it). */
async function loadCursorCodec(sql: Sql, deadline: Deadline | undefined): Promise<CursorCodec> {
  const { secret } = onlyRow(
    await withDeadline(sql<{ secret: Buffer }[]>`SELECT secret FROM signing_keys WHERE purpose = 'page-cursor'`, deadline),
    'signing_keys: page-cursor',
  );
  return createCursorCodec(secret);
}

// Namespaces pg_try_advisory_xact_lock keys: a request holding an Idempotency-Key holds its lock.
const IDEMPOTENCY_LOCK_SEED = 727_002;

/** A pet's columns under the API's camelCase names: the one place the table's snake_case meets them. */
export const petColumns = (q: Sql | TransactionSql) => q`id, name, category_id AS "categoryId", status`;

/** The pet as stored, and the transaction that stored it (for commitWithin). */
async function insertPet(q: TransactionSql, { name, categoryId, status }: NewPet): Promise<{ result: Pet; wrote: WriteTransaction }> {
  // Only the named fields are stored: unknown body properties and a client-sent id never reach SQL.
  const { xid, pid, createdAt, ...pet } = onlyRow(
    await q<(Pet & Omit<WriteTransaction, 'row'> & { createdAt: string })[]>`
      INSERT INTO pets (name, category_id, status)
      VALUES (${name}, ${categoryId}, ${status})
      RETURNING ${petColumns(q)}, ${writeColumns(q)}, created_at::text AS "createdAt"`,
    'INSERT INTO pets',
  );
  return { result: pet, wrote: { xid, pid, row: { table: 'pets', id: pet.id, createdAt } } };
}

/**
 * Keyset pagination: ids after the cursor's, in ascending order (the caller asks for one row more
 * than the page, to learn whether another page follows). Both statements are index range scans
 * (the primary key; pets_status_id_idx), so a page deep in the catalogue costs what the first does.
 * Two statements rather than one with `status = $1 OR $1 IS NULL`, so that each is planned onto its index.
 */
function pageQuery(q: Sql, status: PetStatus | undefined, afterId: number, rows: number) {
  return status === undefined
    ? q<Pet[]>`
        SELECT ${petColumns(q)}
        FROM pets
        WHERE id > ${afterId}
        ORDER BY id
        LIMIT ${rows}`
    : q<Pet[]>`
        SELECT ${petColumns(q)}
        FROM pets
        WHERE status = ${status} AND id > ${afterId}
        ORDER BY id
        LIMIT ${rows}`;
}

/**
 * The pet and the record of its response, in one transaction: they commit together or not at all,
 * so a crash or a 503 never leaves a key that replays nothing or a pet without its key. A key
 * held by a request in flight is refused; one stored for another body is refused; one stored for
 * this body replays the pet it created.
 */
async function insertOnce(
  tx: TransactionSql,
  pet: NewPet,
  { clientId, key, fingerprint }: IdempotentRequest,
  ttlSeconds: number,
): Promise<{ result: { pet: Pet; replayed: boolean }; wrote?: WriteTransaction }> {
  const { locked } = onlyRow(
    await tx<{ locked: boolean }[]>`
      SELECT pg_try_advisory_xact_lock(hashtextextended(${clientId} || ':' || ${key}, ${IDEMPOTENCY_LOCK_SEED})) AS locked`,
    'pg_try_advisory_xact_lock',
  );
  if (!locked) throw new IdempotencyKeyInUseError();
  const [earlier] = await tx<{ fingerprint: string; response: string }[]>`
    SELECT fingerprint, response
    FROM idempotency_keys
    WHERE client_id = ${clientId} AND key = ${key} AND expires_at > now()`;
  if (earlier) {
    if (earlier.fingerprint !== fingerprint) throw new IdempotencyKeyReusedError();
    return { result: { pet: JSON.parse(earlier.response) as Pet, replayed: true } };
  }
  const { result: created, wrote } = await insertPet(tx, pet);
  // An expired record of the same key is replaced.
  await tx`
    INSERT INTO idempotency_keys (client_id, key, fingerprint, status, response, expires_at)
    VALUES (${clientId}, ${key}, ${fingerprint}, 201, ${JSON.stringify(created)}, now() + make_interval(secs => ${ttlSeconds}))
    ON CONFLICT (client_id, key) DO UPDATE
      SET fingerprint = EXCLUDED.fingerprint, status = EXCLUDED.status, response = EXCLUDED.response,
          created_at = now(), expires_at = EXCLUDED.expires_at`;
  return { result: { pet: created, replayed: false }, wrote };
}

export function createPetStore(
  sql: Sql,
  { idempotencyTtlSeconds, assertReady = () => {}, read = (query) => query(sql) }: PetStoreOptions,
): PetStore {
  // Read once, on the first list, and kept; a failed read is tried again by the next list.
  let codec: Promise<CursorCodec> | undefined;
  const cursors = (deadline: Deadline | undefined) =>
    (codec ??= loadCursorCodec(sql, deadline).catch((err: unknown) => {
      codec = undefined;
      throw err;
    }));

  return {
    async list({ limit, status, cursor }, deadline) {
      assertReady();
      const codecNow = await cursors(deadline);
      let afterId = 0;
      if (cursor !== undefined) {
        const position = codecNow.decode(cursor);
        if (!position) throw new InvalidCursorError();
        if (position.status !== status) throw new InvalidCursorError({ status: position.status });
        afterId = position.afterId;
      }
      const rows = await read((q) => withDeadline(pageQuery(q, status, afterId, limit + 1), deadline));
      if (rows.length <= limit) return { pets: rows, next: undefined };
      const pets = rows.slice(0, limit);
      const last = pets[pets.length - 1] as Pet;
      return { pets, next: codecNow.encode({ afterId: last.id, status }) };
    },

    async create(pet, deadline) {
      assertReady();
      // A transaction, not a lone INSERT, so that one answered 503 at its deadline is never committed after.
      return commitWithin(sql, deadline, (tx) => insertPet(tx, pet));
    },

    async createOnce(pet, once, deadline) {
      assertReady();
      // One transaction for the pet and the record of its response (insertOnce).
      return commitWithin(sql, deadline, (tx) => insertOnce(tx, pet, once, idempotencyTtlSeconds));
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
