import type { KeyRegistry } from './apiKeys';
import { type Sql, withDeadline } from './db';
import { type HealthCheck, createHealthCheck } from './health';
import { type PetStore, createPetStore } from './pets';
import type { DatabasePreparation } from './prepare';
import type { ReadRouter } from './replica';

/** Everything the handlers read and write. */
export interface Stores {
  pets: PetStore;
  health: HealthCheck;
}

export interface StoreOptions {
  idempotencyTtlSeconds: number;
  /** Start-up's migration of the database; absent when the caller migrated it already. */
  preparation?: DatabasePreparation;
  /** Where reads go (DATABASE_REPLICA_URL); absent: the same pool as writes. */
  reads?: ReadRouter;
  /** The managed keys: the service is not ready until they are read. */
  keys?: KeyRegistry;
}

/** Everything the handlers read and write, over one pool. */
export function createStores(sql: Sql, { idempotencyTtlSeconds, preparation, reads, keys }: StoreOptions): Stores {
  return {
    pets: createPetStore(sql, {
      idempotencyTtlSeconds,
      assertReady: preparation?.assertReady,
      read: reads && ((query) => reads.read(query)),
    }),
    // Not ready while start-up prepares the database, and then until the keys are read (requests with one would get 503).
    health: createHealthCheck(sql, () => preparation?.pendingReason() ?? (keys && !keys.loaded() ? 'connecting' : undefined)),
  };
}

/** Deletes expired Idempotency-Key records and past rate-limit windows. */
export async function sweepExpired(sql: Sql): Promise<void> {
  await withDeadline(sql`DELETE FROM idempotency_keys WHERE expires_at < now()`);
  await withDeadline(sql`DELETE FROM rate_limit_counts WHERE window_start < extract(epoch FROM now()) - 86400`);
}
