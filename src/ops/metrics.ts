import { Counter, Gauge, Histogram, Registry, type RegistryContentType, collectDefaultMetrics } from 'prom-client';

export type Metrics = ReturnType<typeof createMetrics>;

/** The read replica as the store sees it (DATABASE_REPLICA_URL). */
export interface ReplicaMetrics {
  reachable: boolean;
  /** -1: unknown (not reachable). */
  lagMs: number;
  reads: { replica: number; primary: number };
}

/** The log lines the destination dropped (Logging.droppedLines), read at each scrape. */
function countDroppedLines(registry: Registry, dropped: () => number): void {
  let counted = 0;
  new Counter({
    name: 'animal_store_log_lines_dropped_total',
    help: 'Log lines dropped because stdout did not keep up and 16 MiB of lines were waiting for it.',
    registers: [registry],
    collect() {
      const now = dropped();
      this.inc(now - counted);
      counted = now;
    },
  });
}

/** prom-client's process metrics in the public view, but the runtime's version, in the private view only: it tells an attacker which advisories apply. */
function processMetrics(registry: Registry, privateRegistry: Registry): void {
  collectDefaultMetrics({ register: registry });
  registry.removeSingleMetric('nodejs_version_info');
  const [major = '', minor = '', patch = ''] = process.versions.node.split('.');
  new Gauge({
    name: 'nodejs_version_info',
    help: 'Node.js version info.',
    labelNames: ['version', 'major', 'minor', 'patch'] as const,
    registers: [privateRegistry],
  }).set({ version: process.version, major, minor, patch }, 1);
}

/**
 * Prometheus metrics of one app: requests by operation and status, deprecated calls by client,
 * handler replies that broke the contract, the database's queries in flight (`queriesInFlight`,
 * read at each scrape), the read replica, the process.
 *
 * Two views of one set of metrics. `registry`, the public view, is what GET /metrics shows a
 * caller without a token on the API port: nothing in it names a caller or the runtime.
 * `fullRegistry` adds what does: deprecated calls by client and the Node.js
 * version (`nodejs_version_info`); it is served on METRICS_PORT, or on the API port with METRICS_TOKEN.
 */
export function createMetrics({
  queriesInFlight,
  replica,
  exemplars = false,
  webhookBacklog,
  logLinesDropped,
}: {
  queriesInFlight: () => number;
  replica?: () => ReplicaMetrics;
  /** Tracing on: the request metrics carry the trace and span of a request as an exemplar (OpenMetrics). */
  exemplars?: boolean;
  /** Webhook deliveries due now and the oldest one's age, read at each scrape (it asks the database). */
  webhookBacklog?: () => Promise<{ due: number; oldestMs: number }>;
  /** Log lines dropped since start-up (Logging.droppedLines), read at each scrape. */
  logLinesDropped?: () => number;
}) {
  const registry = new Registry();
  const privateRegistry = new Registry();
  // Exemplars exist only in the OpenMetrics text format, which Prometheus reads as it reads its own.
  if (exemplars)
    for (const r of [registry, privateRegistry]) (r as Registry<RegistryContentType>).setContentType(Registry.OPENMETRICS_CONTENT_TYPE);
  processMetrics(registry, privateRegistry);
  const requests = new Counter({
    name: 'animal_store_http_requests_total',
    help: 'HTTP requests answered, by operationId (none: no operation matched) and status.',
    labelNames: ['operationId', 'status'] as const,
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'animal_store_http_request_duration_seconds',
    help: 'Time from request to response, by operationId and status.',
    labelNames: ['operationId', 'status'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [registry],
    enableExemplars: exemplars,
  });
  const deprecated = new Counter({
    name: 'animal_store_deprecated_calls_total',
    help: 'Calls to deprecated operations, by operationId and client: who still has to move before the sunset.',
    labelNames: ['operationId', 'client'] as const,
    registers: [privateRegistry],
  });
  const replyViolations = new Counter({
    name: 'animal_store_response_contract_violations_total',
    help: "Handler replies that broke the contract (VALIDATE_RESPONSES=log or enforce), by operationId and the reply's status.",
    labelNames: ['operationId', 'status'] as const,
    registers: [registry],
  });
  if (logLinesDropped) countDroppedLines(registry, logLinesDropped);
  new Gauge({
    name: 'animal_store_db_queries_in_flight',
    help: 'Database queries sent and not yet answered (waiting for a pool connection included).',
    registers: [registry],
    collect() {
      this.set(queriesInFlight());
    },
  });
  const mcpToolCalls = new Counter({
    name: 'animal_store_mcp_tool_calls_total',
    help: 'MCP tool calls (POST /mcp), by tool and outcome: ok, or error (the tool result an agent is told failed).',
    labelNames: ['tool', 'outcome'] as const,
    registers: [registry],
  });
  if (replica) replicaMetrics(registry, replica);
  return {
    registry,
    fullRegistry: Registry.merge([registry, privateRegistry]),
    observe(
      operationId: string | undefined,
      status: number,
      seconds: number,
      deprecatedCall: { client: string | undefined } | undefined,
      trace?: { trace_id: string; span_id: string },
    ) {
      const labels = { operationId: operationId ?? 'none', status: String(status) };
      requests.inc(labels);
      // With exemplars enabled prom-client takes an observation as one object, with or without an
      // exemplar; it types an exemplar's labels as the metric's own, while any labels are valid (OpenMetrics).
      if (exemplars) duration.observe({ labels, value: seconds, exemplarLabels: trace as unknown as typeof labels | undefined });
      else duration.observe(labels, seconds);
      if (deprecatedCall && operationId) deprecated.inc({ operationId, client: deprecatedCall.client ?? 'none' });
    },
    replyViolation(operationId: string, status: number) {
      replyViolations.inc({ operationId, status: String(status) });
    },
    mcpToolCall(tool: string, outcome: 'ok' | 'error') {
      mcpToolCalls.inc({ tool, outcome });
    },
    /** One webhook attempt's outcome, and for a delivered one the time from its event's commit. */
    webhookAttempt: webhookMetrics(registry, webhookBacklog),
  };
}

/** Webhook attempts by outcome, the lag from an event's commit to its delivery, and the backlog. */
function webhookMetrics(registry: Registry, backlog: (() => Promise<{ due: number; oldestMs: number }>) | undefined) {
  const attempts = new Counter({
    name: 'animal_store_webhook_attempts_total',
    help: 'Webhook delivery attempts by this process, by outcome: delivered, http_status, timeout, connection_failed, refused_target.',
    labelNames: ['outcome'] as const,
    registers: [registry],
  });
  const lag = new Histogram({
    name: 'animal_store_webhook_delivery_lag_seconds',
    help: "Time from an event's commit to its delivery (the receiver's 2xx), retries included.",
    buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 60, 300, 3600],
    registers: [registry],
  });
  if (backlog) {
    const due = new Gauge({
      name: 'animal_store_webhook_backlog',
      help: 'Webhook deliveries due now and not yet made (every instance).',
      registers: [registry],
    });
    new Gauge({
      name: 'animal_store_webhook_backlog_oldest_seconds',
      help: 'How long the oldest delivery due has waited (0: none).',
      registers: [registry],
      async collect() {
        // One query for both gauges; a database that does not answer leaves them as they were.
        const now = await backlog().catch(() => undefined);
        if (!now) return;
        due.set(now.due);
        this.set(now.oldestMs / 1000);
      },
    });
  }
  return (outcome: string, lagSeconds: number | undefined) => {
    attempts.inc({ outcome });
    if (lagSeconds !== undefined) lag.observe(lagSeconds);
  };
}

/** The read replica's lag, whether it answers, and where reads went (DATABASE_REPLICA_URL). */
function replicaMetrics(registry: Registry, replica: () => ReplicaMetrics): void {
  new Gauge({
    name: 'animal_store_db_replica_lag_milliseconds',
    help: 'How far the read replica is behind the primary (-1: unknown, as it or the primary does not answer).',
    registers: [registry],
    collect() {
      this.set(replica().lagMs);
    },
  });
  new Gauge({
    name: 'animal_store_db_replica_reachable',
    help: '1 when the read replica answered its last check.',
    registers: [registry],
    collect() {
      this.set(replica().reachable ? 1 : 0);
    },
  });
  new Counter({
    name: 'animal_store_db_reads_total',
    help: 'Reads of listPets and getPet, by the server that served them (replica or primary).',
    labelNames: ['server'] as const,
    registers: [registry],
    collect() {
      const { reads } = replica();
      this.reset();
      this.inc({ server: 'replica' }, reads.replica);
      this.inc({ server: 'primary' }, reads.primary);
    },
  });
}
