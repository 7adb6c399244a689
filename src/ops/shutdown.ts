import type { Logger } from './logger';

/** One step of a graceful stop, and how long it may take before the next one starts anyway. */
export interface ShutdownStep {
  /** What the step does, for the log when it fails (`exporting the last spans`). */
  name: string;
  run: () => unknown;
  /** Bound on the step; absent: it bounds itself. */
  withinMs?: number;
}

/**
 * Runs the steps one after another, in the order given: the order is the stop's design (stop
 * accepting before ending the pool that requests in flight use). A step that fails is logged and
 * the next one runs; a step past its bound is left behind.
 */
export async function shutDown(steps: readonly ShutdownStep[], logger: Logger): Promise<void> {
  for (const { name, run, withinMs } of steps) {
    const step = Promise.resolve()
      .then(run)
      .catch((err: unknown) => logger.warn({ err }, `${name} failed`));
    await (withinMs === undefined ? step : Promise.race([step, new Promise((resolve) => setTimeout(resolve, withinMs).unref())]));
  }
}
