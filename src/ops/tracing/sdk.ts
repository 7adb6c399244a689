/**
 * Tracing with the OpenTelemetry SDK, loaded only when tracing is on (`startTracing`). Spans
 * are named and attributed by the semantic conventions' stable HTTP and database attributes:
 * a server span per request (`GET /v1/pets/{petId}`), a client span per SQL statement
 * (`SELECT pets`, the statement text with its `$n` placeholders and never its values). Nothing of
 * the Authorization header, the API key or a body is ever put on a span.
 */
import type { IncomingHttpHeaders } from 'node:http';
import {
  type Attributes,
  type Context,
  type Link,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  type TextMapGetter,
  type TextMapSetter,
  type Tracer,
  context,
  trace,
} from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { defaultResource, resourceFromAttributes } from '@opentelemetry/resources';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BatchSpanProcessor,
  ConsoleSpanExporter,
  NodeTracerProvider,
  ParentBasedSampler,
  type Sampler,
  TraceIdRatioBasedSampler,
} from '@opentelemetry/sdk-trace-node';
import {
  ATTR_CLIENT_ADDRESS,
  ATTR_DB_NAMESPACE,
  ATTR_DB_QUERY_SUMMARY,
  ATTR_DB_QUERY_TEXT,
  ATTR_DB_RESPONSE_STATUS_CODE,
  ATTR_DB_SYSTEM_NAME,
  ATTR_ERROR_TYPE,
  ATTR_HTTP_REQUEST_METHOD,
  ATTR_HTTP_REQUEST_METHOD_ORIGINAL,
  ATTR_HTTP_REQUEST_RESEND_COUNT,
  ATTR_HTTP_RESPONSE_STATUS_CODE,
  ATTR_HTTP_ROUTE,
  ATTR_NETWORK_PROTOCOL_VERSION,
  ATTR_SERVER_ADDRESS,
  ATTR_SERVER_PORT,
  ATTR_SERVICE_NAME,
  ATTR_SERVICE_VERSION,
  ATTR_URL_FULL,
  ATTR_URL_PATH,
  ATTR_URL_SCHEME,
  ATTR_USER_AGENT_ORIGINAL,
  DB_SYSTEM_NAME_VALUE_POSTGRESQL,
} from '@opentelemetry/semantic-conventions';
import type {
  DeliveryTrace,
  GroupMemberTrace,
  GroupTrace,
  RequestOutcome,
  RequestTrace,
  StatementHook,
  TracedDelivery,
  TracedRequest,
  Tracing,
  TracingConfig,
  TracingDeps,
} from './types';

/** The operationId the request matched: no semantic convention names it, so the attribute is this service's own. */
export const ATTR_OPERATION_ID = 'animal_store.operation_id';
/** How many writes a group commit's transaction holds: this service's own attribute. */
export const ATTR_GROUP_MEMBERS = 'animal_store.group_commit.members';
/** A webhook delivery's event, its type and its endpoint: this service's own attributes too. */
export const ATTR_WEBHOOK_EVENT_ID = 'animal_store.webhook.event_id';
export const ATTR_WEBHOOK_EVENT_TYPE = 'animal_store.webhook.event_type';
export const ATTR_WEBHOOK_ENDPOINT_ID = 'animal_store.webhook.endpoint_id';

/** The SDK's sampler for the OTEL_TRACES_SAMPLER the configuration read. */
function createSampler({ sampler, samplerRatio }: TracingConfig): Sampler {
  const ratio = new TraceIdRatioBasedSampler(samplerRatio);
  switch (sampler) {
    case 'always_on':
      return new AlwaysOnSampler();
    case 'always_off':
      return new AlwaysOffSampler();
    case 'traceidratio':
      return ratio;
    case 'parentbased_always_off':
      return new ParentBasedSampler({ root: new AlwaysOffSampler() });
    case 'parentbased_traceidratio':
      return new ParentBasedSampler({ root: ratio });
    default:
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
  }
}

// The HTTP methods the semantic conventions know; any other is `_OTHER`, its name kept apart.
const KNOWN_METHODS = new Set(['CONNECT', 'DELETE', 'GET', 'HEAD', 'OPTIONS', 'PATCH', 'POST', 'PUT', 'QUERY', 'TRACE']);
const HOST = /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+)(?::([0-9]{1,5}))?$/;

/** The request's attributes known when it arrives. */
function requestAttributes(req: TracedRequest): Attributes {
  const { method } = req;
  const known = KNOWN_METHODS.has(method);
  const attributes: Attributes = {
    [ATTR_HTTP_REQUEST_METHOD]: known ? method : '_OTHER',
    [ATTR_URL_PATH]: req.path,
    [ATTR_URL_SCHEME]: 'http',
  };
  if (req.httpVersion !== undefined) attributes[ATTR_NETWORK_PROTOCOL_VERSION] = req.httpVersion;
  if (!known) attributes[ATTR_HTTP_REQUEST_METHOD_ORIGINAL] = method;
  const host = HOST.exec(req.headers.host ?? '');
  if (host?.[1]) attributes[ATTR_SERVER_ADDRESS] = host[1].replace(/^\[|\]$/g, '');
  if (host?.[2]) attributes[ATTR_SERVER_PORT] = Number(host[2]);
  const client = req.socket?.remoteAddress;
  if (client) attributes[ATTR_CLIENT_ADDRESS] = client;
  if (typeof req.headers['user-agent'] === 'string') attributes[ATTR_USER_AGENT_ORIGINAL] = req.headers['user-agent'];
  return attributes;
}

/** Node gives header names in lower case, and repeated ones joined: a repeated traceparent is then invalid, and ignored. */
const headerGetter: TextMapGetter<IncomingHttpHeaders> = {
  get: (headers, key) => headers[key],
  keys: (headers) => Object.keys(headers),
};
const headerSetter: TextMapSetter<Record<string, string>> = {
  set: (headers, key, value) => {
    headers[key] = value;
  },
};

/**
 * `SELECT pets`, `INSERT pets`, `COMMIT`: the statement's first keyword and the table it names, for
 * the span's name; a message of several statements (`SET LOCAL …; COMMIT`) names each: `SET; COMMIT`;
 * a statement with CTEs names each operation in turn (`withSummary`).
 */
export function summaryOf(text: string): string {
  const statements = text.split(/;\s*(?=[A-Za-z])/);
  return statements.length > 1 ? statements.map(statementSummary).join('; ') : statementSummary(text);
}

/**
 * A statement with common table expressions (`WITH pet AS (INSERT INTO pets …), …`): each operation
 * and the table it names, in the order they appear (the CTEs' own names are no tables), as the
 * semantic conventions summarise a statement of several operations: `INSERT pets SELECT webhook_endpoints …`.
 */
function withSummary(text: string): string {
  const ctes = new Set(
    [...text.matchAll(/(?:\bwith|,)\s+("?[A-Za-z_][\w$]*"?)\s+as\s+(?:not\s+)?(?:materialized\s+)?\(/gi)].map((m) => m[1]?.toLowerCase()),
  );
  const parts: string[] = [];
  for (const [, verb = '', table = ''] of text.matchAll(
    /\b(insert\s+into|(?<!\bfor\s+)update|delete\s+from|from)\s+("?[A-Za-z_][\w$]*"?)/gi,
  )) {
    const name = table.replace(/"/g, '');
    if (ctes.has(table.toLowerCase())) continue;
    const part = `${/^from$/i.test(verb) ? 'SELECT' : (verb.split(/\s+/)[0] ?? '').toUpperCase()} ${name}`;
    if (!parts.includes(part)) parts.push(part);
  }
  return parts.length ? parts.join(' ') : 'WITH';
}

function statementSummary(text: string): string {
  const operation = /^\s*([A-Za-z]+)/.exec(text)?.[1]?.toUpperCase() ?? 'SQL';
  if (operation === 'WITH') return withSummary(text);
  const target =
    operation === 'INSERT'
      ? /\binto\s+("?[A-Za-z_][\w$]*"?)/i.exec(text)?.[1]
      : operation === 'UPDATE'
        ? /^\s*update\s+("?[A-Za-z_][\w$]*"?)/i.exec(text)?.[1]
        : /\bfrom\s+("?[A-Za-z_][\w$]*"?)/i.exec(text)?.[1];
  return target ? `${operation} ${target.replace(/"/g, '')}` : operation;
}

/** A span whose operation failed: its status, and the error's type (a PostgreSQL error's SQLSTATE when it has one). */
function failed(span: Span, err: unknown): void {
  const code = (err as { code?: unknown } | undefined)?.code;
  const type = typeof code === 'string' ? code : err instanceof Error ? err.name : 'error';
  if (typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code)) span.setAttribute(ATTR_DB_RESPONSE_STATUS_CODE, code);
  span.setAttribute(ATTR_ERROR_TYPE, type);
  span.setStatus({ code: SpanStatusCode.ERROR });
}

/** The span of the active context, when it is being recorded (a sampled request still in flight). */
function recordingParent(): Context | undefined {
  const active = context.active();
  return trace.getSpan(active)?.isRecording() ? active : undefined;
}

/** The server span of a request, its parent the caller's context when it sent a valid one (the active one, made in process). */
function requestSpan(tracer: Tracer, propagator: W3CTraceContextPropagator, req: TracedRequest): RequestTrace {
  const parent = req.inProcess ? context.active() : propagator.extract(ROOT_CONTEXT, req.headers, headerGetter);
  const attributes = requestAttributes(req);
  const method = String(attributes[ATTR_HTTP_REQUEST_METHOD] === '_OTHER' ? 'HTTP' : attributes[ATTR_HTTP_REQUEST_METHOD]);
  const span = tracer.startSpan(method, { kind: SpanKind.SERVER, attributes }, parent);
  const active = trace.setSpan(parent, span);
  const { traceId, spanId } = span.spanContext();
  return {
    run: (work) => context.with(active, work),
    ids: { trace_id: traceId, span_id: spanId },
    sampled: span.isRecording(),
    end: ({ status, route, operationId, err }: RequestOutcome) => {
      if (route !== undefined) {
        span.setAttribute(ATTR_HTTP_ROUTE, route);
        span.updateName(`${method} ${route}`);
      }
      if (operationId !== undefined) span.setAttribute(ATTR_OPERATION_ID, operationId);
      span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, status);
      // A server span is in error for a 5xx only: a 4xx is the client's (semantic conventions, HTTP spans).
      if (status >= 500) {
        span.setAttribute(ATTR_ERROR_TYPE, err instanceof Error && err.name !== 'Error' ? err.name : String(status));
        span.setStatus({ code: SpanStatusCode.ERROR });
      }
      span.end();
    },
  };
}

/** A step of the request path: a child span of the active one, itself active while `work` runs. */
function stepSpan<T>(tracer: Tracer, name: string, work: () => Promise<T>): Promise<T> {
  const parent = recordingParent();
  if (!parent) return work();
  const span = tracer.startSpan(name, { kind: SpanKind.INTERNAL }, parent);
  return context.with(trace.setSpan(parent, span), work).then(
    (value) => {
      span.end();
      return value;
    },
    (err: unknown) => {
      failed(span, err);
      span.end();
      throw err;
    },
  );
}

/** A group commit's transaction: a root span (it serves several requests), the parent of its BEGIN and COMMIT. */
class GroupSpan implements GroupTrace {
  private readonly active: Context;
  constructor(readonly span: Span) {
    this.active = trace.setSpan(ROOT_CONTEXT, span);
  }
  run<T>(work: () => T): T {
    return context.with(this.active, work);
  }
  end(): void {
    this.span.end();
  }
}

function groupSpan(tracer: Tracer, members: number): GroupTrace {
  return new GroupSpan(
    tracer.startSpan('group commit', { kind: SpanKind.INTERNAL, attributes: { [ATTR_GROUP_MEMBERS]: members } }, ROOT_CONTEXT),
  );
}

/** A write's part in a group commit, under the active span of its request (from when it joins the queue), linked to each group it joins. */
function groupMemberSpan(tracer: Tracer): GroupMemberTrace | undefined {
  const parent = recordingParent();
  if (!parent) return undefined;
  const span = tracer.startSpan('transaction', { kind: SpanKind.INTERNAL }, parent);
  const active = trace.setSpan(parent, span);
  return {
    run: (work) => context.with(active, work),
    joined: (group) => {
      if (group instanceof GroupSpan) span.addLink({ context: group.span.spanContext() });
    },
    end: (err) => {
      if (err !== undefined) failed(span, err);
      span.end();
    },
  };
}

/** The active span's context as a `traceparent` header's value, when it is recorded. */
function activeTraceparent(propagator: W3CTraceContextPropagator): string | undefined {
  const active = recordingParent();
  if (!active) return undefined;
  const carrier: Record<string, string> = {};
  propagator.inject(active, carrier, headerSetter);
  return carrier.traceparent;
}

/**
 * A delivery attempt's span: an HTTP client span (`POST`, the semantic conventions' name for a
 * client request), a root with a link to the create's trace rather than its child, since an
 * attempt may come hours later and be one of several (the conventions' guidance for work a
 * producer's context started but did not wait for).
 */
function deliverySpan(tracer: Tracer, propagator: W3CTraceContextPropagator, delivery: TracedDelivery): DeliveryTrace {
  const url = new URL(delivery.url);
  const links: Link[] = [];
  if (delivery.link !== null) {
    const created = trace.getSpanContext(propagator.extract(ROOT_CONTEXT, { traceparent: delivery.link }, headerGetter));
    if (created) links.push({ context: created });
  }
  const port = url.port ? Number(url.port) : url.protocol === 'https:' ? 443 : 80;
  const span = tracer.startSpan(
    'POST',
    {
      kind: SpanKind.CLIENT,
      root: true,
      links,
      attributes: {
        [ATTR_HTTP_REQUEST_METHOD]: 'POST',
        [ATTR_URL_FULL]: `${url.protocol}//${url.host}${url.pathname}`,
        [ATTR_SERVER_ADDRESS]: url.hostname.replace(/^\[|\]$/g, ''),
        [ATTR_SERVER_PORT]: port,
        [ATTR_WEBHOOK_EVENT_ID]: delivery.eventId,
        [ATTR_WEBHOOK_EVENT_TYPE]: delivery.eventType,
        [ATTR_WEBHOOK_ENDPOINT_ID]: delivery.endpointId,
        ...(delivery.attempt > 1 ? { [ATTR_HTTP_REQUEST_RESEND_COUNT]: delivery.attempt - 1 } : {}),
      },
    },
    ROOT_CONTEXT,
  );
  const headers: Record<string, string> = {};
  propagator.inject(trace.setSpan(ROOT_CONTEXT, span), headers, headerSetter);
  return {
    headers,
    end({ status, failure }) {
      if (status !== undefined) span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, status);
      // A client span is in error for any status of 400 or more, and for no answer at all (semantic conventions, HTTP spans).
      const error = failure === 'http_status' && status !== undefined ? String(status) : failure;
      if (error !== undefined) {
        span.setAttribute(ATTR_ERROR_TYPE, error);
        span.setStatus({ code: SpanStatusCode.ERROR });
      }
      span.end();
    },
  };
}

/** postgres.js's debug hook for a pool on `url`: a client span per statement of a traced request. */
function statementSpans(tracer: Tracer, url: string): StatementHook {
  const target = new URL(url);
  const base: Attributes = {
    [ATTR_DB_SYSTEM_NAME]: DB_SYSTEM_NAME_VALUE_POSTGRESQL,
    [ATTR_DB_NAMESPACE]: decodeURIComponent(target.pathname.slice(1)) || 'postgres',
    [ATTR_SERVER_ADDRESS]: target.hostname.replace(/^\[|\]$/g, ''),
    [ATTR_SERVER_PORT]: Number(target.port || 5432),
  };
  // The service sends a few statement texts over and over: each one's name and attributes are made once.
  const known = new Map<string, { summary: string; attributes: Attributes }>();
  const describe = (text: string) => {
    let found = known.get(text);
    if (!found) {
      const summary = summaryOf(text);
      found = { summary, attributes: { ...base, [ATTR_DB_QUERY_TEXT]: text, [ATTR_DB_QUERY_SUMMARY]: summary } };
      if (known.size < 1_000) known.set(text, found);
    }
    return found;
  };
  return (_connection, text, _parameters, _types, query) => {
    // Statements of a traced request only: start-up, sweeps and replica checks have no request to belong to.
    const parent = recordingParent();
    if (!parent) return;
    const { summary, attributes } = describe(text);
    const span = tracer.startSpan(summary, { kind: SpanKind.CLIENT, attributes }, parent);
    query.then(
      () => span.end(),
      (err: unknown) => {
        failed(span, err);
        span.end();
      },
    );
  };
}

export function createTracing(config: TracingConfig, { serviceVersion }: TracingDeps): Tracing {
  const resource = defaultResource().merge(
    resourceFromAttributes({
      ...config.resourceAttributes,
      [ATTR_SERVICE_NAME]: config.serviceName,
      [ATTR_SERVICE_VERSION]: serviceVersion,
    }),
  );
  const exporters = config.exporters.map((name) =>
    name === 'otlp'
      ? new OTLPTraceExporter({ url: config.otlpEndpoint, headers: config.otlpHeaders, timeoutMillis: config.otlpTimeoutMs })
      : new ConsoleSpanExporter(),
  );
  const provider = new NodeTracerProvider({
    resource,
    sampler: createSampler(config),
    spanProcessors: exporters.map((exporter) => new BatchSpanProcessor(exporter)),
  });
  // The global context manager (AsyncLocalStorage), so that a request's span is the parent of
  // what its handling starts; the caller's context is read by our own propagator, below.
  provider.register({ propagator: null });
  const tracer = provider.getTracer(config.serviceName, serviceVersion);
  const propagator = new W3CTraceContextPropagator();

  return {
    request: (req) => requestSpan(tracer, propagator, req),
    step: (name, work) => stepSpan(tracer, name, work),
    traceparent: () => activeTraceparent(propagator),
    delivery: (delivery) => deliverySpan(tracer, propagator, delivery),
    group: (members) => groupSpan(tracer, members),
    groupMember: () => groupMemberSpan(tracer),
    statements: (url) => statementSpans(tracer, url),
    shutdown: () => provider.shutdown(),
  };
}
