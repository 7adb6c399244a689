import type { GroupCommitOptions } from './write/groupCommit';
import type { KeyRegistry } from './keys/registry';
import type { Sql } from './database/db';
import { NotReadyError } from './errors';
import { type HealthCheck, createHealthCheck } from './database/health';
import { sweepExpiredIdempotencyKeys } from './pets/idempotency';
import { type PetStore, createPetStore } from './pets/store';
import type { DatabasePreparation } from './database/prepare';
import type { ReadRouter } from './database/replica';
import { sweepPastWindows } from './rateLimits';
import { type WebhookEndpointStore, createWebhookEndpointStore, sweepWebhooks } from './webhooks/endpoints';

/** Everything the handlers read and write. */
export interface Stores {
  pets: PetStore;
  health: HealthCheck;
  webhookEndpoints: WebhookEndpointStore;
}

export interface StoreOptions {
  idempotencyTtlSeconds: number;
  /** Start-up's migration of the database; absent when the caller migrated it already. */
  preparation?: DatabasePreparation;
  /** Where reads go (DATABASE_REPLICA_URL); absent: the same pool as writes. */
  reads?: ReadRouter;
  /** The managed keys: the service is not ready until they are read. */
  keyRegistry?: KeyRegistry;
  /** DATABASE_URL asks for the primary among its hosts: readiness says `database_failover` while none is there. */
  followsPrimary?: boolean;
  /** With `followsPrimary`: how long a create whose COMMIT was in flight when its server was lost waits for the promoted one to say. */
  failoverTimeoutMs?: number;
  /** WEBHOOK_ALLOW_PRIVATE_TARGETS. */
  allowPrivateTargets?: boolean;
  /** Called after a create committed an event for a subscribed endpoint: the delivery worker looks at once. */
  onEvents?: () => void;
  /** The running create's trace (W3C traceparent) when tracing records it (Tracing.traceparent). */
  traceContext?: () => string | undefined;
  /** The group commit's spans when traced, and what hears of a group that held its slot too long (PetStoreOptions.groupCommit). */
  groupCommit?: GroupCommitOptions;
}

/** Everything the handlers read and write, over one pool. */
export function createStores(sql: Sql, options: StoreOptions): Stores {
  const {
    idempotencyTtlSeconds,
    preparation,
    reads,
    keyRegistry: keys,
    followsPrimary,
    failoverTimeoutMs,
    onEvents,
    traceContext,
    groupCommit,
  } = options;
  const resolveMs = followsPrimary ? failoverTimeoutMs : undefined;
  // Not ready while start-up prepares the database, and then until the keys are first read: the
  // service serves from the moment /readyz says so, and not before (a managed key would get 503).
  const pendingReason = () => preparation?.pendingReason() ?? (keys && !keys.loaded() ? 'connecting' : undefined);
  const assertReady = () => {
    preparation?.assertReady();
    if (keys && !keys.loaded()) throw new NotReadyError('The service is starting (connecting); retry shortly');
  };
  return {
    pets: createPetStore(sql, {
      idempotencyTtlSeconds,
      assertReady,
      read: reads && ((query) => reads.read(query)),
      resolveMs,
      onEvents,
      traceContext,
      groupCommit,
    }),
    health: createHealthCheck(sql, pendingReason, { followsPrimary }),
    webhookEndpoints: createWebhookEndpointStore(sql, {
      allowPrivateTargets: options.allowPrivateTargets ?? false,
      assertReady,
      resolveMs,
    }),
  };
}

/** Deletes expired Idempotency-Key records, past rate-limit windows, and webhook records past their retention. */
export async function sweepExpired(sql: Sql): Promise<void> {
  await sweepExpiredIdempotencyKeys(sql);
  await sweepPastWindows(sql);
  await sweepWebhooks(sql);
}
