import type { Logger } from '../ops/logger';
import type { Sql } from '../store/database/db';
import { createDeliveryQueue } from '../store/webhooks/deliveries';
import { createSender } from './send';
import { type DeliveryWorker, type WorkerOptions, startDeliveryWorker } from './worker';

/** The events' delivery in one process: started once the database is ready, nudged by creates, stopped at shutdown. */
export interface Webhooks {
  /** For createStores' `onEvents`: a create committed an event; safe to call before `start`. */
  nudge(): void;
  /** `observe`: told of each attempt (the metrics). */
  start(observe?: WorkerOptions['observe']): void;
  stop(withinMs?: number): Promise<void>;
  /** Deliveries due now, and the oldest one's age (every instance's): for the metrics. */
  backlog(): Promise<{ due: number; oldestMs: number }>;
}

export interface WebhooksOptions extends Omit<WorkerOptions, 'queue' | 'sender' | 'logger'> {
  /** WEBHOOK_ALLOW_PRIVATE_TARGETS. */
  allowPrivateTargets: boolean;
  /** How long an attempt may take (default ATTEMPT_TIMEOUT_MS, 10 s). */
  attemptTimeoutMs?: number;
}

export function createWebhooks(sql: Sql, logger: Logger, { allowPrivateTargets, attemptTimeoutMs, ...worker }: WebhooksOptions): Webhooks {
  const sender = createSender({ allowPrivate: allowPrivateTargets, timeoutMs: attemptTimeoutMs });
  const queue = createDeliveryQueue(sql);
  let running: DeliveryWorker | undefined;
  let stopped = false;
  return {
    nudge: () => running?.nudge(),
    start(observe) {
      if (running || stopped) return;
      running = startDeliveryWorker({ observe, ...worker, queue, sender, logger });
    },
    backlog: () => queue.backlog(),
    async stop(withinMs) {
      stopped = true;
      await running?.stop(withinMs);
      sender.close();
    },
  };
}
