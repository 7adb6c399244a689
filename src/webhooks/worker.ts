import type { Logger } from '../ops/logger';
import type { Tracing } from '../ops/tracing';
import type { ClaimedDelivery, DeliveryQueue, NextStep } from '../store/webhooks/deliveries';
import { type EventWriter, eventOf } from './events';
import { ATTEMPT_TIMEOUT_MS, type AttemptResult, type Sender } from './send';
import { signedHeaders } from './signing';

const SECOND = 1_000;
const HOUR = 3_600_000;
/** The published backoff (docs/webhooks.md): after the first attempt, 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, then every 10 h. */
export const RETRY_DELAYS_MS: readonly number[] = [5 * SECOND, 300 * SECOND, 1_800 * SECOND, 2 * HOUR, 5 * HOUR, 10 * HOUR];
/** A delivery not made within this long of its event is marked failed. */
export const GIVE_UP_AFTER_MS = 72 * HOUR;
/** An endpoint whose every attempt failed for this long is disabled. */
export const DISABLE_AFTER_MS = 72 * HOUR;

/** After attempt `attempt` (from 1) of an event `ageMs` old: delivered, tried again after the schedule's delay, or failed for good. */
export function nextStep(
  attempt: number,
  ageMs: number,
  result: AttemptResult,
  { retryDelaysMs = RETRY_DELAYS_MS, giveUpAfterMs = GIVE_UP_AFTER_MS }: { retryDelaysMs?: readonly number[]; giveUpAfterMs?: number } = {},
): NextStep {
  if (result.outcome === 'delivered') return { state: 'delivered' };
  const delayMs = retryDelaysMs[attempt - 1] ?? retryDelaysMs[retryDelaysMs.length - 1] ?? 10 * HOUR;
  return ageMs + result.durationMs + delayMs > giveUpAfterMs ? { state: 'failed' } : { state: 'pending', delayMs };
}

export interface WorkerOptions {
  queue: DeliveryQueue;
  sender: Sender;
  logger: Logger;
  /**
   * Attempts in flight at once in this process (16: as many as the sender's sockets to one host).
   * Each holds its slot through its settle too: at 8, a steady 200 creates/s waited in the queue,
   * lag p50 142 ms; at 16, 30 ms (docs/performance.md, Webhooks).
   */
  concurrency?: number;
  /** How often the queue is looked at when nothing nudged the worker. */
  pollMs?: number;
  retryDelaysMs?: readonly number[];
  giveUpAfterMs?: number;
  disableAfterMs?: number;
  /** Told of each attempt, for the metrics: its result, and for a delivered one the time from the event's commit. */
  observe?: (result: AttemptResult, lagMs: number | undefined) => void;
  /** Each event's body, written by the contract's serialiser. */
  writeEvent: EventWriter;
  /** With tracing on: a client span per attempt, linked to the trace of the create that made the event. */
  tracing?: Pick<Tracing, 'delivery'>;
}

export interface DeliveryWorker {
  /** Deliveries may be due now (this process committed an event): look at once rather than at the next poll. */
  nudge(): void;
  /** No more claims; attempts in flight finish (up to `withinMs`); those that do not are claimed again after their lease. */
  stop(withinMs?: number): Promise<void>;
}

/** One attempt: signed, sent, its span ended, its result settled and logged. */
async function attemptDelivery(delivery: ClaimedDelivery, options: WorkerOptions): Promise<void> {
  const { queue, sender, logger, disableAfterMs = DISABLE_AFTER_MS, observe, tracing, writeEvent } = options;
  const startedAt = new Date();
  const body = writeEvent(eventOf(delivery));
  const headers = signedHeaders(delivery.eventId, Math.floor(Date.now() / 1000), body, delivery.secrets);
  const { endpointId, eventId, attempt: n } = delivery;
  const span = tracing?.delivery({
    eventId,
    eventType: delivery.type,
    endpointId,
    attempt: n,
    url: delivery.url,
    link: delivery.traceContext,
  });
  const result = await sender.send(delivery.url, { ...span?.headers, ...headers }, body);
  span?.end({ status: result.status, failure: result.outcome === 'delivered' ? undefined : result.outcome });
  const next = nextStep(delivery.attempt, delivery.ageMs, result, options);
  observe?.(result, result.outcome === 'delivered' ? delivery.ageMs + result.durationMs : undefined);
  const line = {
    webhook: {
      endpointId,
      eventId,
      attempt: n,
      outcome: result.outcome,
      status: result.status,
      durationMs: result.durationMs,
      next: next.state,
    },
  };
  try {
    const disabled = await queue.settle(delivery, startedAt, result, next, disableAfterMs);
    if (result.outcome === 'delivered') logger.info(line, 'webhook delivered');
    else logger.warn({ ...line, webhook: { ...line.webhook, error: result.error } }, 'webhook attempt failed');
    if (disabled) logger.warn({ webhook: { endpointId } }, 'webhook endpoint disabled: every delivery failed');
  } catch (err) {
    logger.warn({ err, ...line }, 'webhook attempt not recorded: it is claimed again after its lease');
  }
}

/**
 * Claims due deliveries (any instance's worker: the queue hands each to one) and sends them,
 * `concurrency` at a time, signed with each secret in force. An attempt's result is settled in
 * one statement; a settle that fails leaves the delivery to be claimed again after its lease, so
 * a receiver may see an event twice, never no time (at least once).
 */
export function startDeliveryWorker(options: WorkerOptions): DeliveryWorker {
  const { queue, logger, concurrency = 16, pollMs = 1_000 } = options;
  const leaseMs = ATTEMPT_TIMEOUT_MS * 3;
  const inFlight = new Set<Promise<void>>();
  let stopped = false;
  let ticking = false;
  let again = false;
  /** A look at the queue is already scheduled for this turn of the event loop. */
  let nudged = false;
  /** Nudged while every slot was busy: the next attempt to finish looks at the queue. */
  let wanted = false;
  let timer: NodeJS.Timeout | undefined;

  const attempt = (delivery: ClaimedDelivery) => attemptDelivery(delivery, options);

  const schedule = (ms: number) => {
    clearTimeout(timer);
    if (!stopped) timer = setTimeout(() => void tick(), ms);
  };

  async function tick(): Promise<void> {
    if (stopped) return;
    if (ticking) return void (again = true);
    ticking = true;
    let full = false;
    try {
      const free = concurrency - inFlight.size;
      if (free > 0) {
        const claimed = await queue.claim(free, leaseMs);
        full = claimed.length === free;
        for (const delivery of claimed) {
          const running: Promise<void> = attempt(delivery)
            .catch((err: unknown) => logger.error({ err }, 'webhook attempt failed unexpectedly'))
            .finally(() => {
              inFlight.delete(running);
              if (full || wanted) nudge();
            });
          inFlight.add(running);
        }
      }
    } catch (err) {
      logger.warn({ err }, 'claiming webhook deliveries failed; trying again shortly');
    } finally {
      ticking = false;
    }
    if (again || (full && inFlight.size < concurrency)) {
      again = false;
      return void setImmediate(() => void tick());
    }
    schedule(pollMs);
  }

  // Called by every create that wrote an event: it costs nothing while every slot is busy, and
  // the creates of one turn of the event loop share one look (npm run bench -- --webhooks measured
  // a look per create at a fifth more CPU per create).
  const nudge = () => {
    if (stopped || nudged) return;
    if (inFlight.size >= concurrency) return void (wanted = true);
    wanted = false;
    nudged = true;
    setImmediate(() => {
      nudged = false;
      void tick();
    });
  };
  schedule(0);
  return {
    nudge,
    async stop(withinMs = 8_000) {
      stopped = true;
      clearTimeout(timer);
      let waited: NodeJS.Timeout | undefined;
      await Promise.race([Promise.allSettled([...inFlight]), new Promise((resolve) => (waited = setTimeout(resolve, withinMs)))]);
      clearTimeout(waited);
    },
  };
}
