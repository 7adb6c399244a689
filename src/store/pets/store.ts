import type { WriteSql } from '../write/transaction';
import type { components } from '../../../generated/openapi';
import { type WriteTransaction, commitWithin, writeColumns } from '../write/commit';
import { type Sql, onlyRow, withDeadline } from '../database/db';
import { type CursorCodec, createCursorCodec } from './cursors';
import type { Deadline } from '../database/deadline';
import { InvalidCursorError } from '../errors';
import { type GroupCommitOptions, createGroupCommitter } from '../write/groupCommit';
import { type IdempotentRequest, once } from './idempotency';

type Pet = components['schemas']['Pet'];
/** A new pet as the handler passes it on: the request validator has filled in the spec's defaults (`status`). */
type NewPet = Required<components['schemas']['NewPet']>;
type PetStatus = components['schemas']['PetStatus'];

/** What a list asks for: a page of at most `limit` animals, after the position `cursor` names (absent: the first page). */
export interface PetFilter {
  limit: number;
  status?: PetStatus;
  /** Only animals of this category. */
  categoryId?: number;
  /** A cursor from an earlier page's `next`, of a walk with the same `status` and `categoryId`. */
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
   * `create`, at most once per Idempotency-Key (`once`): `replayed`, the pet was created by an
   * earlier request with this key, and is returned as it was then. Throws
   * IdempotencyKeyInUseError or IdempotencyKeyReusedError.
   */
  createOnce(pet: NewPet, request: IdempotentRequest, deadline?: Deadline): Promise<{ pet: Pet; replayed: boolean }>;
  /** Asks serving_primary() as a page does (pageQuery): a 404 from a primary a standby was promoted over would be wrong. */
  get(id: number, deadline?: Deadline): Promise<Pet | undefined>;
}

export interface PetStoreOptions {
  /** How long an Idempotency-Key is remembered. */
  idempotencyTtlSeconds: number;
  /** Throws NotReadyError while the database is not yet migrated. */
  assertReady?: () => void;
  /** Runs list's and get's query: on a streaming replica while it keeps up (ReadRouter.read); default: on `sql`. */
  read?: <T>(query: (q: Sql) => Promise<T>) => Promise<T>;
  /** How long a create whose COMMIT's answer was lost looks for its outcome (commitWithin; default RESOLVE_MS). */
  resolveMs?: number;
  /** Called once a create that wrote a `pet.created` event (an endpoint is subscribed) has committed. */
  onEvents?: () => void;
  /** The running create's trace (W3C traceparent) when tracing records it: stored with its event, for the deliveries' spans to link to. */
  traceContext?: () => string | undefined;
  /** Creates that arrive together share a transaction (createGroupCommitter): traced, each group a span of its own. */
  groupCommit?: GroupCommitOptions;
}

/** The page cursors' signing key, shared by every instance (migration 0004 made it). */
async function loadCursorCodec(sql: Sql, deadline: Deadline | undefined): Promise<CursorCodec> {
  const { secret } = onlyRow(
    await withDeadline(sql<{ secret: Buffer }[]>`SELECT secret FROM signing_keys WHERE purpose = 'page-cursor'`, deadline),
    'signing_keys: page-cursor',
  );
  return createCursorCodec(secret);
}

/** A pet's columns under the API's camelCase names: the one place the table's snake_case meets them. */
export const petColumns = (q: Sql) => q`id, name, category_id AS "categoryId", status`;

/** The pet as stored, the transaction that stored it (for commitWithin), and whether it wrote an event. */
async function insertPet(
  q: WriteSql,
  { name, categoryId, status }: NewPet,
  traceContext: string | undefined,
): Promise<{ result: Pet; wrote: WriteTransaction; events: boolean }> {
  // Only the named fields are stored: unknown body properties and a client-sent id never reach SQL.
  // Its `pet.created` event, and a delivery to each enabled endpoint subscribed to it, are written
  // by the same statement (a transactional outbox): they commit with the animal or not at all, in
  // the same round trip. With no endpoint subscribed, nothing more is written. On a primary a standby
  // may have been promoted over, serving_primary() (migration 10) fails the statement: the create is
  // a 503 before any COMMIT, where its COMMIT would have waited for a standby that is gone.
  const { xid, pid, createdAt, events, ...pet } = onlyRow(
    await q<(Pet & Omit<WriteTransaction, 'row'> & { createdAt: string; events: boolean })[]>`
      WITH pet AS (
        INSERT INTO pets (name, category_id, status)
        VALUES (${name}, ${categoryId}, ${status})
        RETURNING id, name, category_id, status, created_at
      ), subscribed AS (
        SELECT id FROM webhook_endpoints
        WHERE 'pet.created' = ANY (events) AND disabled_at IS NULL AND deleted_at IS NULL
      ), event AS (
        INSERT INTO webhook_events (type, data, created_at, trace_context)
        SELECT 'pet.created',
               jsonb_build_object('id', id, 'name', name, 'categoryId', category_id, 'status', status), created_at, ${traceContext ?? null}
        FROM pet
        WHERE EXISTS (SELECT 1 FROM subscribed)
        RETURNING id
      ), delivery AS (
        INSERT INTO webhook_deliveries (endpoint_id, event_id)
        SELECT subscribed.id, event.id FROM subscribed, event
      )
      SELECT ${petColumns(q)}, ${writeColumns(q)}, created_at::text AS "createdAt", EXISTS (SELECT 1 FROM event) AS events
      FROM pet
      WHERE serving_primary()`,
    'INSERT INTO pets',
  );
  return { result: pet, wrote: { xid, pid, row: { table: 'pets', id: pet.id, createdAt } }, events };
}

/**
 * Keyset pagination: ids after the cursor's, in ascending order (the caller asks for one row more
 * than the page, to learn whether another page follows). Each statement is one index range scan
 * (the primary key; pets_status_id_idx; pets_category_id_id_idx; pets_category_id_status_id_idx),
 * so a page deep in the catalogue costs what the first does. One statement per combination of
 * filters rather than one with `status = $1 OR $1 IS NULL`, so that each is planned onto its index.
 * Each asks `serving_primary()` (migration 10) once, before its scan: a primary cut off from its
 * synchronous standby, which may have been promoted in its place, answers no page (SQLSTATE SR503, a 503).
 */
function pageQuery(q: Sql, { status, categoryId }: Pick<PetFilter, 'status' | 'categoryId'>, afterId: number, rows: number) {
  if (categoryId === undefined)
    return status === undefined
      ? q<Pet[]>`
          SELECT ${petColumns(q)}
          FROM pets
          WHERE id > ${afterId} AND serving_primary()
          ORDER BY id
          LIMIT ${rows}`
      : q<Pet[]>`
          SELECT ${petColumns(q)}
          FROM pets
          WHERE status = ${status} AND id > ${afterId} AND serving_primary()
          ORDER BY id
          LIMIT ${rows}`;
  return status === undefined
    ? q<Pet[]>`
        SELECT ${petColumns(q)}
        FROM pets
        WHERE category_id = ${categoryId} AND id > ${afterId} AND serving_primary()
        ORDER BY id
        LIMIT ${rows}`
    : q<Pet[]>`
        SELECT ${petColumns(q)}
        FROM pets
        WHERE category_id = ${categoryId} AND status = ${status} AND id > ${afterId} AND serving_primary()
        ORDER BY id
        LIMIT ${rows}`;
}

export function createPetStore(
  sql: Sql,
  {
    idempotencyTtlSeconds,
    assertReady = () => {},
    read = (query) => query(sql),
    resolveMs,
    onEvents,
    traceContext,
    groupCommit,
  }: PetStoreOptions,
): PetStore {
  const group = createGroupCommitter(sql, groupCommit);
  // Read once, on the first list, and kept; a failed read is tried again by the next list. Once read,
  // it is taken as it is: no list waits a turn of the event loop's microtasks for a promise long settled.
  let codec: Promise<CursorCodec> | undefined;
  let loaded: CursorCodec | undefined;
  const cursors = (deadline: Deadline | undefined) =>
    (codec ??= loadCursorCodec(sql, deadline).then(
      (read) => (loaded = read),
      (err: unknown) => {
        codec = undefined;
        throw err;
      },
    ));

  return {
    async list({ limit, status, categoryId, cursor }, deadline) {
      assertReady();
      const codecNow = loaded ?? (await cursors(deadline));
      let afterId = 0;
      if (cursor !== undefined) {
        const position = codecNow.decode(cursor);
        if (!position) throw new InvalidCursorError();
        if (position.status !== status || position.categoryId !== categoryId)
          throw new InvalidCursorError({ status: position.status, categoryId: position.categoryId });
        afterId = position.afterId;
      }
      const rows = await read((q) => withDeadline(pageQuery(q, { status, categoryId }, afterId, limit + 1), deadline));
      if (rows.length <= limit) return { pets: rows, next: undefined };
      const pets = rows.slice(0, limit);
      const last = pets[pets.length - 1] as Pet;
      return { pets, next: codecNow.encode({ afterId: last.id, status, categoryId }) };
    },

    async create(pet, deadline) {
      assertReady();
      // A transaction, not a lone INSERT, so that one answered 503 at its deadline is never committed after:
      // two round trips (BEGIN with the INSERT, then COMMIT), the least that keeps the commit ours to send (docs/performance.md).
      // Creates that arrive together share them (group).
      let events = false;
      const made = await commitWithin(
        sql,
        deadline,
        async (tx) => {
          const inserted = await insertPet(tx, pet, traceContext?.());
          events = inserted.events;
          return inserted;
        },
        { resolveMs, transact: group.transact },
      );
      if (events) onEvents?.();
      return made;
    },

    async createOnce(pet, request, deadline) {
      assertReady();
      // One transaction for the pet and the record of its response: they commit together or not at all.
      // Never a group's: the key's advisory lock is its session's, so two requests with one key in one group would both hold it.
      let events = false;
      const made = await commitWithin(
        sql,
        deadline,
        (tx) =>
          once(tx, request, idempotencyTtlSeconds, async () => {
            const inserted = await insertPet(tx, pet, traceContext?.());
            events = inserted.events;
            return inserted;
          }),
        { resolveMs },
      );
      if (events) onEvents?.();
      return { pet: made.value, replayed: made.replayed };
    },

    async get(id, deadline) {
      assertReady();
      const [pet] = await read((q) =>
        withDeadline(
          q<Pet[]>`
            SELECT ${petColumns(q)}
            FROM pets
            WHERE id = ${id} AND serving_primary()`,
          deadline,
        ),
      );
      return pet;
    },
  };
}
