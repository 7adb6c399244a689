import { type IncomingMessage, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import protobuf from 'protobufjs';

/**
 * The part of the OTLP protobuf definitions (opentelemetry-proto: collector/trace/v1,
 * trace/v1, common/v1, resource/v1) that a trace export carries, with the specification's
 * field numbers: what a collector decodes an OTLP/HTTP request with.
 */
const OTLP_TRACES_PROTO = `
syntax = "proto3";
package otlp;

message ExportTraceServiceRequest { repeated ResourceSpans resource_spans = 1; }
message ResourceSpans { Resource resource = 1; repeated ScopeSpans scope_spans = 2; string schema_url = 3; }
message Resource { repeated KeyValue attributes = 1; uint32 dropped_attributes_count = 2; }
message ScopeSpans { InstrumentationScope scope = 1; repeated Span spans = 2; string schema_url = 3; }
message InstrumentationScope { string name = 1; string version = 2; repeated KeyValue attributes = 3; uint32 dropped_attributes_count = 4; }
message Span {
  bytes trace_id = 1;
  bytes span_id = 2;
  string trace_state = 3;
  bytes parent_span_id = 4;
  string name = 5;
  SpanKind kind = 6;
  fixed64 start_time_unix_nano = 7;
  fixed64 end_time_unix_nano = 8;
  repeated KeyValue attributes = 9;
  uint32 dropped_attributes_count = 10;
  repeated Event events = 11;
  uint32 dropped_events_count = 12;
  repeated Link links = 13;
  uint32 dropped_links_count = 14;
  Status status = 15;
  fixed32 flags = 16;
  message Event { fixed64 time_unix_nano = 1; string name = 2; repeated KeyValue attributes = 3; uint32 dropped_attributes_count = 4; }
  message Link { bytes trace_id = 1; bytes span_id = 2; string trace_state = 3; repeated KeyValue attributes = 4; uint32 dropped_attributes_count = 5; fixed32 flags = 6; }
}
enum SpanKind {
  SPAN_KIND_UNSPECIFIED = 0;
  SPAN_KIND_INTERNAL = 1;
  SPAN_KIND_SERVER = 2;
  SPAN_KIND_CLIENT = 3;
  SPAN_KIND_PRODUCER = 4;
  SPAN_KIND_CONSUMER = 5;
}
message Status { reserved 1; string message = 2; StatusCode code = 3; }
enum StatusCode { STATUS_CODE_UNSET = 0; STATUS_CODE_OK = 1; STATUS_CODE_ERROR = 2; }
message KeyValue { string key = 1; AnyValue value = 2; }
message AnyValue {
  oneof value {
    string string_value = 1;
    bool bool_value = 2;
    int64 int_value = 3;
    double double_value = 4;
    ArrayValue array_value = 5;
    KeyValueList kvlist_value = 6;
    bytes bytes_value = 7;
  }
}
message ArrayValue { repeated AnyValue values = 1; }
message KeyValueList { repeated KeyValue values = 1; }
`;

const ExportTraceServiceRequest = protobuf.parse(OTLP_TRACES_PROTO).root.lookupType('otlp.ExportTraceServiceRequest');

type Value = string | number | boolean | Value[] | { [key: string]: Value } | null;
interface WireKeyValue {
  key: string;
  value?: Record<string, unknown>;
}

/** An AnyValue as plain JSON (bytes as hex). */
function valueOf(any: Record<string, unknown> | undefined): Value {
  if (!any) return null;
  if (any.stringValue !== undefined) return any.stringValue as string;
  if (any.boolValue !== undefined) return any.boolValue as boolean;
  if (any.intValue !== undefined) return Number(any.intValue);
  if (any.doubleValue !== undefined) return any.doubleValue as number;
  if (any.bytesValue !== undefined) return Buffer.from(any.bytesValue as Uint8Array).toString('hex');
  if (any.arrayValue) return ((any.arrayValue as { values?: Record<string, unknown>[] }).values ?? []).map(valueOf);
  if (any.kvlistValue) return attributesOf((any.kvlistValue as { values?: WireKeyValue[] }).values);
  return null;
}

const attributesOf = (list: WireKeyValue[] | undefined): Record<string, Value> =>
  Object.fromEntries((list ?? []).map((kv) => [kv.key, valueOf(kv.value)]));

const hex = (bytes: unknown) => (bytes && (bytes as Uint8Array).length ? Buffer.from(bytes as Uint8Array).toString('hex') : undefined);

/** One span as a collector would show it. */
export interface ExportedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string | undefined;
  traceState: string;
  name: string;
  kind: 'INTERNAL' | 'SERVER' | 'CLIENT' | 'PRODUCER' | 'CONSUMER' | 'UNSPECIFIED';
  startNs: bigint;
  endNs: bigint;
  attributes: Record<string, Value>;
  events: { name: string; attributes: Record<string, Value> }[];
  /** The spans of other traces this one links to (hex ids). */
  links: { traceId: string; spanId: string }[];
  status: { code: 'UNSET' | 'OK' | 'ERROR'; message: string };
  resource: Record<string, Value>;
  scope: { name: string; version: string };
}

interface WireSpan {
  traceId: Uint8Array;
  spanId: Uint8Array;
  parentSpanId?: Uint8Array;
  traceState?: string;
  name: string;
  kind?: number;
  startTimeUnixNano: { toString(): string };
  endTimeUnixNano: { toString(): string };
  attributes?: WireKeyValue[];
  events?: { name: string; attributes?: WireKeyValue[] }[];
  links?: { traceId: Uint8Array; spanId: Uint8Array }[];
  status?: { code?: number; message?: string };
}
interface WireRequest {
  resourceSpans?: {
    resource?: { attributes?: WireKeyValue[] };
    scopeSpans?: { scope?: { name?: string; version?: string }; spans?: WireSpan[] }[];
  }[];
}

const KINDS = ['UNSPECIFIED', 'INTERNAL', 'SERVER', 'CLIENT', 'PRODUCER', 'CONSUMER'] as const;
const CODES = ['UNSET', 'OK', 'ERROR'] as const;

/** An OTLP/HTTP trace export request's body, decoded. */
export function decodeTraces(body: Buffer): ExportedSpan[] {
  const request = ExportTraceServiceRequest.toObject(ExportTraceServiceRequest.decode(body), { longs: String }) as WireRequest;
  return (request.resourceSpans ?? []).flatMap((rs) =>
    (rs.scopeSpans ?? []).flatMap((ss) =>
      (ss.spans ?? []).map((s) => ({
        traceId: hex(s.traceId) ?? '',
        spanId: hex(s.spanId) ?? '',
        parentSpanId: hex(s.parentSpanId),
        traceState: s.traceState ?? '',
        name: s.name,
        kind: KINDS[s.kind ?? 0] ?? 'UNSPECIFIED',
        startNs: BigInt(s.startTimeUnixNano.toString()),
        endNs: BigInt(s.endTimeUnixNano.toString()),
        attributes: attributesOf(s.attributes),
        events: (s.events ?? []).map((e) => ({ name: e.name, attributes: attributesOf(e.attributes) })),
        links: (s.links ?? []).map((l) => ({ traceId: hex(l.traceId) ?? '', spanId: hex(l.spanId) ?? '' })),
        status: { code: CODES[s.status?.code ?? 0] ?? 'UNSET', message: s.status?.message ?? '' },
        resource: attributesOf(rs.resource?.attributes),
        scope: { name: ss.scope?.name ?? '', version: ss.scope?.version ?? '' },
      })),
    ),
  );
}

export interface OtlpReceiver {
  /** The base URL to give as OTEL_EXPORTER_OTLP_ENDPOINT. */
  endpoint: string;
  spans: ExportedSpan[];
  /** Every export request, as it came: its path, content type and body. */
  requests: { path: string; contentType: string | undefined; body: Buffer }[];
  /** TCP connections ever opened to it. */
  connections(): number;
  close(): Promise<void>;
}

/** An OTLP/HTTP receiver on a loopback port: POST /v1/traces with a protobuf body, answered as a collector answers. */
export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ExportedSpan[] = [];
  const requests: OtlpReceiver['requests'] = [];
  let connections = 0;
  const readAll = async (req: IncomingMessage) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks);
  };
  const server = createServer((req, res) => {
    void readAll(req).then((body) => {
      requests.push({ path: req.url ?? '', contentType: req.headers['content-type'], body });
      if (req.method !== 'POST' || req.url !== '/v1/traces' || req.headers['content-type'] !== 'application/x-protobuf') {
        res.writeHead(404).end();
        return;
      }
      spans.push(...decodeTraces(body));
      // An empty ExportTraceServiceResponse: everything accepted.
      res.writeHead(200, { 'Content-Type': 'application/x-protobuf' }).end();
    });
  });
  server.on('connection', () => (connections += 1));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    spans,
    requests,
    connections: () => connections,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
