import { type Sql, withDeadline } from './db';
import { type HealthCheck, createHealthCheck } from './health';
import { type PetStore, createPetStore } from './pets';
import type { DatabasePreparation } from './prepare';

/** Everything the handlers read and write. */
export interface Stores {
  pets: PetStore;
  health: HealthCheck;
}

export interface StoreOptions {
  idempotencyTtlSeconds: number;
  /** Start-up's migration of the database; absent when the caller migrated it already. */
  preparation?: DatabasePreparation;
}

/** Everything the handlers read and write, over one pool. */
export function createStores(sql: Sql, { idempotencyTtlSeconds, preparation }: StoreOptions): Stores {
  return {
    pets: createPetStore(sql, { idempotencyTtlSeconds, assertReady: preparation?.assertReady }),
    health: createHealthCheck(sql, preparation?.pendingReason),
  };
}

/** Deletes expired Idempotency-Key records and past rate-limit windows. */
export async function sweepExpired(sql: Sql): Promise<void> {
  await withDeadline(sql`DELETE FROM idempotency_keys WHERE expires_at < now()`);
  await withDeadline(sql`DELETE FROM rate_limit_counts WHERE window_start < extract(epoch FROM now()) - 86400`);
}
