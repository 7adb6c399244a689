/**
 * OpenTelemetry traces. Off by default: then `startTracing` returns undefined, loads none of the
 * SDK and starts no exporter, and every caller skips its tracing with one check.
 */
import type { RequestTrace, Tracing, TracingConfig, TracingDeps } from './types';

export * from './types';

/** Tracing as configured; undefined when it is off (no exporter named), without loading the SDK. */
export function startTracing(config: TracingConfig, deps: TracingDeps): Tracing | undefined {
  if (config.exporters.length === 0) return undefined;
  // Loaded here, not imported above: the SDK and its exporter take a tenth of a second to load,
  // which a service with tracing off (the default) does not pay.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const sdk = require('./sdk') as typeof import('./sdk');
  return sdk.createTracing(config, deps);
}

/** A step of the request path, run as `traced(name, work)`. */
export type Traced = <T>(name: string, work: () => Promise<T>) => Promise<T>;

/** Each step as a child span of the active one under `tracing`; with tracing off, the step itself and nothing else. */
export function tracedSteps(tracing: Tracing | undefined): Traced {
  return tracing ? (name, work) => tracing.step(name, work) : (_name, work) => work();
}

/** `work` run inside a request's server span when it has one (tracing on), else just run. */
export function withinSpan<T>(span: Pick<RequestTrace, 'run'> | undefined, work: () => T): T {
  return span ? span.run(work) : work();
}
