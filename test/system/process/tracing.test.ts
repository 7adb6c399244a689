import { randomBytes } from 'node:crypto';
import { connect } from '../../../src/store/database/db';
import { createKey } from '../../../src/store/keys/admin';
import { migrate } from '../../../src/store/database/migrate';
import { type TestDatabase, freshDatabase, serverDatabaseEnv } from '../../support/databases';
import { type ExportedSpan, type OtlpReceiver, startOtlpReceiver } from '../../support/otlp';
import { type Proxy, proxyTo } from '../../support/proxy';
import { type Running, reapAll, startServer, stop } from '../../support/processes';
import { type Received, startReceiver } from '../../support/receiver';

// OpenTelemetry end to end: the real server process exports through its OTLP/HTTP exporter
// to a receiver here, which decodes the protobuf as a collector would; the trees, the
// attributes, the caller's context and the log lines are read from what arrived.
const KEY = 'tracing-key-0123456789abcdef';
const hexId = (bytes: number) => randomBytes(bytes).toString('hex');

afterAll(reapAll);

/** The JSON lines the server wrote. */
const logLines = (server: Running) =>
  server
    .output()
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, any>);

describe('OpenTelemetry traces', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await freshDatabase();
  });
  afterAll(() => db.drop());
  const dbEnv = (url: string) => ({ ...serverDatabaseEnv(url), API_KEYS: KEY });

  describe('with OTEL_TRACES_EXPORTER=otlp', () => {
    let receiver: OtlpReceiver;
    let proxy: Proxy;
    let server: Running;
    const caller = { traceId: hexId(16), spanId: hexId(8) };
    const unsampled = hexId(16);
    const marker = `Traced-${hexId(6)}`;
    let created: { id: number };
    let statuses: Record<string, number>;
    let metrics: { type: string | null; text: string };
    /** A managed key, used once and kept out of every span as the API_KEYS key is. */
    let managed: string;
    /** The webhook deliveries of the traced create: the first answered 503, the retry 204. */
    let deliveries: Received[];
    let secret: string;
    let hooksUrl: string;

    beforeAll(async () => {
      const sql = connect(db.url, { max: 1 });
      await migrate(sql);
      managed = (await createKey(sql, { client: 'traced', scopes: ['pets:read'], actor: 'test' })).key;
      await sql.end();
      receiver = await startOtlpReceiver();
      proxy = await proxyTo(db.url);
      const hooks = await startReceiver((_request, index) => ({ status: index === 0 ? 503 : 204 }));
      deliveries = hooks.received;
      hooksUrl = hooks.url;
      server = await startServer({
        ...dbEnv(proxy.url),
        WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
        OTEL_TRACES_EXPORTER: 'otlp',
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
        OTEL_SERVICE_NAME: 'animal-store-test',
        OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment.name=test',
      });
      const auth = { Authorization: `Bearer ${KEY}` };
      for (let i = 0; (await fetch(`${server.origin}/readyz`)).status !== 200; i++) {
        if (i > 100) throw new Error(`not ready:\n${server.output()}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      const subscribed = await fetch(`${server.baseUrl}/webhook-endpoints`, {
        method: 'POST',
        headers: { ...auth, 'Content-Type': 'application/json' },
        body: JSON.stringify({ url: hooks.url, events: ['pet.created'] }),
      });
      const endpoint = (await subscribed.json()) as { id: string; secret: string };
      secret = endpoint.secret;
      const create = await fetch(`${server.baseUrl}/pets`, {
        method: 'POST',
        headers: {
          ...auth,
          'Content-Type': 'application/json',
          traceparent: `00-${caller.traceId}-${caller.spanId}-01`,
          tracestate: 'caller=7',
        },
        body: JSON.stringify({ name: marker, categoryId: 7 }),
      });
      created = (await create.json()) as { id: number };
      const malformed = await fetch(`${server.baseUrl}/pets/${created.id}`, { headers: { ...auth, traceparent: '00-zz-not-a-trace-01' } });
      const notSampled = await fetch(`${server.baseUrl}/pets?limit=1`, {
        headers: { ...auth, traceparent: `00-${unsampled}-${hexId(8)}-00` },
      });
      const refused = await fetch(`${server.baseUrl}/pets`);
      const withManaged = await fetch(`${server.baseUrl}/pets?limit=1`, { headers: { Authorization: `Bearer ${managed}` } });
      // The event's first attempt is answered 503, its retry (5 s later) 204; both are recorded before the database goes.
      for (let i = 0; (server.output().match(/"msg":"webhook (delivered|attempt failed)"/g) ?? []).length < 2; i++) {
        if (i > 200) throw new Error(`not delivered:\n${server.output()}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      await hooks.close();
      const unsubscribed = await fetch(`${server.baseUrl}/webhook-endpoints/${endpoint.id}`, { method: 'DELETE', headers: auth });
      const scraped = await fetch(`${server.origin}/metrics`);
      metrics = { type: scraped.headers.get('content-type'), text: await scraped.text() };
      // The database goes away: the next read is a 503, its span in error.
      proxy.close();
      const unavailable = await fetch(`${server.baseUrl}/pets`, { headers: auth });
      statuses = {
        subscribed: subscribed.status,
        create: create.status,
        unsubscribed: unsubscribed.status,
        malformed: malformed.status,
        notSampled: notSampled.status,
        refused: refused.status,
        withManaged: withManaged.status,
        unavailable: unavailable.status,
      };
      // The last spans are exported at shutdown.
      expect({ code: await stop(server), output: '' }).toEqual({ code: 0, output: '' });
    }, 60_000);
    afterAll(() => receiver.close());

    const trace = (traceId: string) => receiver.spans.filter((s) => s.traceId === traceId);
    const one = (spans: ExportedSpan[], name: string) => {
      const found = spans.filter((s) => s.name === name);
      expect(found.map((s) => s.name)).toEqual([name]);
      return found[0] as ExportedSpan;
    };
    // The SDK starts each span at Date.now() (whole milliseconds) and ends it a measured duration
    // later, so two spans' clocks may disagree by up to a millisecond.
    const MS = 1_000_000n;
    const within = (child: ExportedSpan, parent: ExportedSpan) => {
      expect(child.parentSpanId).toBe(parent.spanId);
      expect({ startsAfter: child.startNs > parent.startNs - MS, endsBefore: child.endNs < parent.endNs + MS }).toEqual({
        startsAfter: true,
        endsBefore: true,
      });
    };

    test('when the requests were answered, then they were answered as without tracing', () => {
      expect(statuses).toEqual({
        subscribed: 201,
        create: 201,
        unsubscribed: 204,
        malformed: 200,
        notSampled: 200,
        refused: 401,
        withManaged: 200,
        unavailable: 503,
      });
      expect(receiver.requests.every((r) => r.path === '/v1/traces' && r.contentType === 'application/x-protobuf')).toBe(true);
    });

    test("when a createPet came with a traceparent, then its server span is the caller's child, named by method and route", () => {
      const server = one(trace(caller.traceId), 'POST /v1/pets');
      expect(server).toMatchObject({
        kind: 'SERVER',
        parentSpanId: caller.spanId,
        traceState: 'caller=7',
        status: { code: 'UNSET' },
        attributes: {
          'http.request.method': 'POST',
          'http.route': '/v1/pets',
          'http.response.status_code': 201,
          'url.path': '/v1/pets',
          'url.scheme': 'http',
          'network.protocol.version': '1.1',
          'server.address': '127.0.0.1',
          'client.address': expect.stringMatching(/127\.0\.0\.1$/),
          'animal_store.operation_id': 'createPet',
        },
        resource: expect.objectContaining({
          'service.name': 'animal-store-test',
          'service.version': '1.0.0',
          'deployment.environment.name': 'test',
          'telemetry.sdk.language': 'nodejs',
        }),
        scope: { name: 'animal-store-test', version: '1.0.0' },
      });
      expect(trace(caller.traceId).filter((s) => s.kind === 'SERVER')).toHaveLength(1);
    });

    test("when a createPet was traced, then reading its body, its handler, its part in a group commit and its statement are spans under its server span, linked to the group's transaction", () => {
      const spans = trace(caller.traceId);
      const server = one(spans, 'POST /v1/pets');
      const handler = one(spans, 'handler createPet');
      const body = one(spans, 'read body');
      expect([handler.kind, body.kind]).toEqual(['INTERNAL', 'INTERNAL']);
      within(handler, server);
      within(body, server);
      // The create joined a group commit: its span holds its statement, and links to the group's transaction.
      const member = one(spans, 'transaction');
      expect(member.kind).toBe('INTERNAL');
      within(member, handler);
      // The animal, its event and its deliveries are one statement (the outbox, docs/webhooks.md).
      const statements = spans.filter((s) => s.kind === 'CLIENT' && s.parentSpanId === member.spanId);
      expect(statements.map((s) => s.name)).toEqual([
        'INSERT pets SELECT webhook_endpoints INSERT webhook_events INSERT webhook_deliveries',
      ]);
      for (const statement of statements) within(statement, member);
      // The group's transaction is a trace of its own (it serves every create of the group): its BEGIN and COMMIT.
      expect(member.links).toHaveLength(1);
      const group = receiver.spans.find((s) => s.spanId === member.links[0]?.spanId) as ExportedSpan;
      expect(group).toMatchObject({
        name: 'group commit',
        kind: 'INTERNAL',
        parentSpanId: undefined,
        attributes: { 'animal_store.group_commit.members': 1 },
      });
      expect(
        trace(group.traceId)
          .map((s) => `${s.name}${s.parentSpanId === group.spanId ? ' (in the group)' : ''}`)
          .sort(),
      ).toEqual(['BEGIN (in the group)', 'SET; COMMIT (in the group)', 'group commit']);
      const insert = one(spans, 'INSERT pets SELECT webhook_endpoints INSERT webhook_events INSERT webhook_deliveries');
      expect(insert.attributes).toEqual({
        'db.system.name': 'postgresql',
        'db.namespace': new URL(db.url).pathname.slice(1),
        'server.address': '127.0.0.1',
        'server.port': Number(new URL(proxy.url).port),
        'db.query.summary': 'INSERT pets SELECT webhook_endpoints INSERT webhook_events INSERT webhook_deliveries',
        'db.query.text': expect.stringMatching(/INSERT INTO pets \(name, category_id, status\)\s+VALUES \(\$1, \$2, \$3\)/),
      });
    });

    test("when the create's event was delivered, then each attempt is a client span of its own trace, linked to the create's", () => {
      const created = trace(caller.traceId);
      const attempts = receiver.spans.filter((s) => s.attributes['animal_store.webhook.event_id'] !== undefined);
      expect(attempts.map((s) => [s.name, s.kind, s.parentSpanId, s.attributes['http.response.status_code']])).toEqual([
        ['POST', 'CLIENT', undefined, 503],
        ['POST', 'CLIENT', undefined, 204],
      ]);
      const [failed, delivered] = attempts as [ExportedSpan, ExportedSpan];
      // The link names a span of the create's trace: the one running when the event was written.
      expect(failed.links).toHaveLength(1);
      expect(delivered.links).toEqual(failed.links);
      expect(failed.links[0]?.traceId).toBe(caller.traceId);
      expect(created.map((s) => s.spanId)).toContain(failed.links[0]?.spanId);
      expect(failed.traceId).not.toBe(delivered.traceId);
      expect(failed).toMatchObject({
        status: { code: 'ERROR' },
        attributes: {
          'http.request.method': 'POST',
          'url.full': hooksUrl,
          'server.address': '127.0.0.1',
          'error.type': '503',
          'animal_store.webhook.event_type': 'pet.created',
          'animal_store.webhook.endpoint_id': expect.stringMatching(/^we_/),
        },
      });
      expect(failed.attributes['http.request.resend_count']).toBeUndefined();
      expect(delivered).toMatchObject({ status: { code: 'UNSET' }, attributes: { 'http.request.resend_count': 1 } });
      // The receiver was given each attempt's own context, beside the Standard Webhooks headers.
      expect(deliveries.map((d) => d.headers.traceparent)).toEqual(attempts.map((s) => `00-${s.traceId}-${s.spanId}-01`));
      expect(deliveries.map((d) => d.headers['webhook-id'])).toEqual([
        failed.attributes['animal_store.webhook.event_id'],
        failed.attributes['animal_store.webhook.event_id'],
      ]);
    });

    test('when a request came with a malformed traceparent, then it was served and traced as a trace of its own', () => {
      const get = receiver.spans.filter((s) => s.name === 'GET /v1/pets/{petId}');
      expect(get).toHaveLength(1);
      expect(get[0]).toMatchObject({
        parentSpanId: undefined,
        attributes: { 'http.response.status_code': 200, 'http.route': '/v1/pets/{petId}' },
      });
      expect(get[0]?.traceId).toMatch(/^[0-9a-f]{32}$/);
      expect(get[0]?.traceId).not.toBe(caller.traceId);
      // The rate limiter's reservation is this request's statement when it made one: the key's tokens go back after
      // 250 ms idle (main.ts's flush), so a create before it that took longer leaves this request to reserve again.
      const spans = trace(get[0]?.traceId as string);
      const reservation = spans.filter((s) => s.name === 'INSERT rate_limit_counts');
      expect(reservation.length).toBeLessThanOrEqual(1);
      for (const r of reservation) expect([r.kind, spans.some((s) => s.spanId === r.parentSpanId)]).toEqual(['CLIENT', true]);
      expect(
        spans
          .filter((s) => !reservation.includes(s))
          .map((s) => s.name)
          .sort(),
      ).toEqual(['GET /v1/pets/{petId}', 'SELECT pets', 'handler getPet']);
    });

    test("when the caller's traceparent says not sampled, then nothing of that trace is exported (parent-based sampling)", () => {
      expect(trace(unsampled)).toEqual([]);
    });

    test('when the database is gone, then the 503 is a server span in error, and its log line names the trace', () => {
      const failed = receiver.spans.filter((s) => s.kind === 'SERVER' && s.attributes['http.response.status_code'] === 503);
      expect(failed).toHaveLength(1);
      expect(failed[0]).toMatchObject({
        name: 'GET /v1/pets',
        status: { code: 'ERROR' },
        attributes: { 'error.type': expect.any(String), 'animal_store.operation_id': 'listPets' },
      });
      const line = logLines(server).find((l) => l.res?.statusCode === 503);
      expect(line).toMatchObject({ level: 40, trace_id: failed[0]?.traceId, span_id: failed[0]?.spanId, err: expect.any(Object) });
    });

    test("when a request was traced, then its log line carries the trace's and its server span's ids", () => {
      const span = one(trace(caller.traceId), 'POST /v1/pets');
      const line = logLines(server).find((l) => l.req?.method === 'POST' && l.req.path === '/v1/pets');
      expect(line).toMatchObject({ msg: 'request completed', trace_id: caller.traceId, span_id: span.spanId });
      // Every request's line (the readiness polls apart): the subscription and its deletion, the unsampled one, the 401, the managed key's and the scrape included.
      const requestLines = logLines(server).filter((l) => l.req && l.req.path !== '/readyz');
      expect(requestLines).toHaveLength(9);
      for (const l of requestLines)
        expect(l).toMatchObject({ trace_id: expect.stringMatching(/^[0-9a-f]{32}$/), span_id: expect.stringMatching(/^[0-9a-f]{16}$/) });
      expect(logLines(server).find((l) => l.req?.path === `/v1/pets` && l.res?.statusCode === 200)).toMatchObject({ trace_id: unsampled });
    });

    test("when metrics are scraped, then the request latency histogram names a request's trace as its exemplar (OpenMetrics)", () => {
      expect(metrics.type).toMatch(/^application\/openmetrics-text; version=1\.0\.0/);
      const span = one(trace(caller.traceId), 'POST /v1/pets');
      const exemplars = metrics.text
        .split('\n')
        .filter((l) => l.startsWith('animal_store_http_request_duration_seconds_bucket{') && l.includes('operationId="createPet"'));
      expect(exemplars.some((l) => l.includes(`# {trace_id="${caller.traceId}",span_id="${span.spanId}"}`))).toBe(true);
      // The unsampled listPets was never exported: no exemplar points at its trace.
      expect(metrics.text).not.toContain(unsampled);
      expect(metrics.text.trimEnd().endsWith('# EOF')).toBe(true);
    });

    test('when every exported span is read, then none carries the API key, the Authorization header, a body or a webhook secret', () => {
      expect(receiver.spans.length).toBeGreaterThan(8);
      const exported = JSON.stringify(receiver.spans, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v));
      expect(exported).not.toContain(KEY);
      expect(exported).not.toContain(managed.slice(17, 49));
      expect(exported.toLowerCase()).not.toContain('authorization');
      expect(exported.toLowerCase()).not.toContain('bearer');
      expect(exported).not.toContain(marker);
      expect(exported).not.toContain(secret.slice(6));
      const keys = new Set(receiver.spans.flatMap((s) => Object.keys(s.attributes)));
      expect([...keys].filter((k) => /header|body|key|auth/i.test(k))).toEqual([]);
    });
  });

  test('when tracing is off (the default), then nothing is exported, no exporter connects, and log lines carry no trace ids', async () => {
    const receiver = await startOtlpReceiver();
    try {
      const server = await startServer({ ...dbEnv(db.url), OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint });
      for (let i = 0; (await fetch(`${server.origin}/readyz`)).status !== 200; i++) {
        if (i > 100) throw new Error(`not ready:\n${server.output()}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      const res = await fetch(`${server.baseUrl}/pets`, {
        headers: { Authorization: `Bearer ${KEY}`, traceparent: `00-${hexId(16)}-${hexId(8)}-01` },
      });
      expect(res.status).toBe(200);
      expect(await stop(server)).toBe(0);
      expect(receiver.connections()).toBe(0);
      const lines = logLines(server).filter((l) => l.req);
      expect(lines.map((l) => l.req.path)).toContain('/v1/pets');
      for (const line of lines) {
        expect(line).not.toHaveProperty('trace_id');
        expect(line).not.toHaveProperty('span_id');
      }
    } finally {
      await receiver.close();
    }
  }, 60_000);
});
