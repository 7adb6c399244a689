/**
 * What the standard OTEL_* variables configure, and what the rest of the service asks of a
 * tracer: types only, so that nothing which uses a tracer loads the SDK.
 */
import type { IncomingHttpHeaders } from 'node:http';

export const TRACES_EXPORTERS = ['otlp', 'console'] as const;
export type TracesExporter = (typeof TRACES_EXPORTERS)[number];

export const SAMPLERS = [
  'always_on',
  'always_off',
  'traceidratio',
  'parentbased_always_on',
  'parentbased_always_off',
  'parentbased_traceidratio',
] as const;
export type SamplerName = (typeof SAMPLERS)[number];

export interface TracingConfig {
  /** OTEL_TRACES_EXPORTER: where spans go. Empty: tracing is off (`none`, the default, or OTEL_SDK_DISABLED=true). */
  exporters: TracesExporter[];
  /** OTEL_EXPORTER_OTLP_TRACES_ENDPOINT as given, or OTEL_EXPORTER_OTLP_ENDPOINT with `v1/traces` appended. */
  otlpEndpoint: string;
  /** OTEL_EXPORTER_OTLP_HEADERS, with OTEL_EXPORTER_OTLP_TRACES_HEADERS over it. */
  otlpHeaders: Record<string, string>;
  /** OTEL_EXPORTER_OTLP_(TRACES_)TIMEOUT: how long one export may take, in ms. */
  otlpTimeoutMs: number;
  /** OTEL_SERVICE_NAME, else `service.name` of OTEL_RESOURCE_ATTRIBUTES, else the package's name. */
  serviceName: string;
  /** OTEL_RESOURCE_ATTRIBUTES, as given (`service.name` included when it was there). */
  resourceAttributes: Record<string, string>;
  /** OTEL_TRACES_SAMPLER, and its OTEL_TRACES_SAMPLER_ARG (the ratio of the traceidratio samplers). */
  sampler: SamplerName;
  samplerRatio: number;
}

export const DEFAULT_SERVICE_NAME = 'animal-store-api';

/** What ends a request's server span, and names it: its answer. */
export interface RequestOutcome {
  status: number;
  /** The route template the request matched (`/v1/pets/{petId}`); absent: it matched none. */
  route?: string;
  operationId?: string;
  /** The fault behind a 5xx, when there is one. */
  err?: unknown;
}

/** What a request's server span is named and attributed from when it arrives, whichever door it came through. */
export interface TracedRequest {
  method: string;
  /** The path, without the query. */
  path: string;
  headers: IncomingHttpHeaders;
  /** The HTTP version of the connection; absent for a request made in process (an MCP tool call's operation). */
  httpVersion?: string;
  /** The connection it came on, whose peer is the client's address (read only when a span is made). */
  socket?: { readonly remoteAddress?: string };
  /**
   * Made in this process, within a span of its own (an MCP tool call): its parent is the active
   * span. Otherwise the parent is the caller's `traceparent`, when it sent a valid one.
   */
  inProcess?: boolean;
}

/** The server span of one request. */
export interface RequestTrace {
  /** Runs `work` (the rest of the request's handling) with this span as the active context. */
  run<T>(work: () => T): T;
  /** For the request's log lines: the trace and this span, as W3C hex ids. */
  ids: { trace_id: string; span_id: string };
  /** Whether the span is recorded and exported: only then may a metric's exemplar point at it. */
  sampled: boolean;
  end(outcome: RequestOutcome): void;
}

/**
 * postgres.js's `debug` option for a pool (patched to pass the query last: patches/README.md):
 * a client span per statement sent within a traced request, ended when the query settles.
 */
export type StatementHook = (connection: number, text: string, parameters: unknown[], types: unknown[], query: Promise<unknown>) => void;

/** One webhook delivery attempt, as its span is named and attributed (never the secret, the headers or the body). */
export interface TracedDelivery {
  eventId: string;
  eventType: string;
  endpointId: string;
  /** From 1. */
  attempt: number;
  /** The endpoint's URL: its scheme, host, port and path go on the span, never its query (a receiver may put its own token there). */
  url: string;
  /** The trace of the create that made the event (W3C traceparent), linked from the span. */
  link: string | null;
}

/** The client span of one delivery attempt. */
export interface DeliveryTrace {
  /** The headers that carry this span's context to the receiver (W3C traceparent). */
  headers: Record<string, string>;
  /** Ends the span with what the attempt met: the receiver's status, or the failure's kind (`timeout`, `connection_failed`, …). */
  end(outcome: { status?: number; failure?: string }): void;
}

/** A group commit's transaction (src/store/write/groupCommit.ts): a span of its own, the parent of its BEGIN and COMMIT. */
export interface GroupTrace {
  /** Runs `work` (the group's own statements) with this span active. */
  run<T>(work: () => T): T;
  end(): void;
}

/** A write's part in a group commit: a span of its request, the parent of its statements, linked to each group it joined. */
export interface GroupMemberTrace {
  /** Runs `work` (the write's statements) with this span active. */
  run<T>(work: () => T): T;
  /** Links this span to the span of a group's transaction it takes part in. */
  joined(group: GroupTrace): void;
  /** Ends the span with the write's outcome: committed, or its error. */
  end(err?: unknown): void;
}

export interface Tracing {
  /** The server span of a request (its parent from the caller's `traceparent`, or the active span for one made in process). */
  request(req: TracedRequest): RequestTrace;
  /** A step of the request path as a child span of the active one, active while `work` runs. */
  step<T>(name: string, work: () => Promise<T>): Promise<T>;
  /** The active span's context as a W3C traceparent, when it is recorded (a sampled request in flight); else undefined. */
  traceparent(): string | undefined;
  /**
   * A webhook delivery attempt's client span: the root of a trace of its own (an attempt may come
   * hours after the create, and be one of several), linked to the create's trace when it had one.
   */
  delivery(delivery: TracedDelivery): DeliveryTrace;
  /** A group commit's transaction span: the root of a trace of its own, since it serves several requests. */
  group(members: number): GroupTrace;
  /** The span of a write joining a group commit, in the active (request's) context; undefined when that is not recorded. */
  groupMember(): GroupMemberTrace | undefined;
  /** The statement hook of a pool on `url` (its server and database go on every statement's span). */
  statements(url: string): StatementHook;
  /** Exports what is buffered and stops. */
  shutdown(): Promise<void>;
}

export interface TracingDeps {
  /** service.version on the resource. */
  serviceVersion: string;
}
